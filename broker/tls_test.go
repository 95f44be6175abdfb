package broker

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeKeyPair writes a self-signed certificate and its key as PEM files.
func writeKeyPair(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rungs-test-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeKeyPair(t, dir)
	e, err := Config{URL: "amqps://u:p@mq/", CACert: cert, ClientCert: cert, ClientKey: key}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if e.tls == nil || e.tls.RootCAs == nil || len(e.tls.Certificates) != 1 {
		t.Fatalf("tls = %+v, want a CA pool and one client certificate", e.tls)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (Config{URL: "amqps://mq/", CACert: notPEM}).Validate(); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("Validate() with a non-PEM CA = %v", err)
	}
	if err := (Config{URL: "amqps://mq/", ClientKey: key}).Validate(); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("Validate() with a key but no certificate = %v", err)
	}
}

// TestManagementHTTPS talks to an https management API whose certificate
// only the configured CA vouches for.
func TestManagementHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(&fakeAPI{t: t})
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	mgmtURL := strings.Replace(srv.URL, "https://", "https://admin:"+fakePassword+"@", 1)

	m, err := NewManagement(Config{URL: "amqp://mq/", MgmtURL: mgmtURL, CACert: ca})
	if err != nil {
		t.Fatal(err)
	}
	if o, err := m.Overview(context.Background()); err != nil || o.RabbitMQVersion != "3.10.8" {
		t.Errorf("Overview() over https = %+v, %v", o, err)
	}

	untrusting, err := NewManagement(Config{URL: "amqp://mq/", MgmtURL: mgmtURL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = untrusting.Overview(context.Background())
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Overview() without the CA = %v, want a certificate error", err)
	}
	if err != nil {
		checkNoSecret(t, err)
	}
}
