package broker

import (
	"context"
	"net/url"
)

// taggedDefinitions are a vhost's definitions as last read, with the
// entity tag the broker sent for them.
type taggedDefinitions struct {
	etag string
	defs apiDefinitions
}

// cachedDefinitions reads a vhost's definitions. From RabbitMQ 4.3.5 the
// definitions endpoint sends an ETag and answers If-None-Match with 304
// Not Modified when nothing changed (topology.Version.DefinitionsETag;
// measured on 4.3.6), so a refresh whose topology did not change costs a
// few hundred bytes instead of the whole vhost's definitions. Older
// brokers send no ETag: nothing is cached, nothing is asked, and every
// read is a full one, as before.
func (m *Management) cachedDefinitions(ctx context.Context, vhost string, out *apiDefinitions) error {
	var last *taggedDefinitions
	if v, ok := m.defs.Load(vhost); ok {
		last = v.(*taggedDefinitions)
	}
	etag := ""
	if last != nil {
		etag = last.etag
	}
	var fresh apiDefinitions
	tag, notModified, err := m.getTagged(ctx, "definitions/"+url.PathEscape(vhost), nil, &fresh, etag)
	switch {
	case err != nil:
		return err
	case notModified:
		*out = last.defs
		return nil
	case tag != "":
		m.defs.Store(vhost, &taggedDefinitions{etag: tag, defs: fresh})
	default:
		m.defs.Delete(vhost)
	}
	*out = fresh
	return nil
}
