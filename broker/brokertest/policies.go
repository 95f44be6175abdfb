package brokertest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Policies lists the names of the policies in cfg's vhost, or in every
// vhost when cfg.Vhost is empty, as cfg's user sees them.
func Policies(t testing.TB, cfg broker.Config) []string {
	t.Helper()
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/policies"
	if cfg.Vhost != "" {
		path += "/" + url.PathEscape(cfg.Vhost)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(cfg.MgmtURL, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	req.SetBasicAuth(u.User.Username(), pw)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var ps []topology.Policy
	if err := json.NewDecoder(res.Body).Decode(&ps); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
