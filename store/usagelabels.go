package store

import (
	"cmp"
	"context"
)

// usageLabel is what a request was, apart from its numbers and time: its
// key, model, channel, status, client style, endpoint and unit. A gateway sees
// few of them (keys × models × channels × outcomes × endpoints), so a
// usage row stores the id of its label in usage_labels rather than five
// strings: binding a string costs SQLite a copy into C memory and back.
type usageLabel struct {
	keyID                   int64
	keyName, model, channel string
	status                  int
	style, endpoint, unit   string
}

func labelOf(u *Usage) usageLabel {
	return usageLabel{keyID: u.KeyID, keyName: u.KeyName, model: u.Model, channel: u.Channel, status: u.Status,
		style: u.ClientStyle, endpoint: u.Endpoint, unit: u.Unit}
}

// labelIDs returns the label id of each row, making the labels not yet
// in the database. Ids are kept in memory (labels are never deleted, so an
// id stays right), up to maxLabels of them.
func (s *sqlStore) labelIDs(ctx context.Context, rows []Usage) ([]int64, error) {
	ids := make([]int64, len(rows))
	s.labelsMu.Lock()
	defer s.labelsMu.Unlock()
	var prev usageLabel
	for i := range rows {
		l := labelOf(&rows[i])
		if i > 0 && l == prev {
			// Rows in a row often have one label (a gateway beside one
			// application): comparing strings that are mostly the same
			// strings costs less than hashing them for the map.
			ids[i] = ids[i-1]
			continue
		}
		prev = l
		id, ok := s.labels[l]
		if !ok {
			var err error
			if id, err = s.newLabel(ctx, l); err != nil {
				return nil, err
			}
			s.keepLabel(l, id)
		}
		ids[i] = id
	}
	return ids, nil
}

// newLabel returns the id of l in usage_labels, adding it when missing,
// in a transaction of its own: an id is kept in memory only once it is
// committed. Another node may add the same label at the same time; the
// unique constraint makes both get the same id.
func (s *sqlStore) newLabel(ctx context.Context, l usageLabel) (int64, error) {
	var id int64
	err := s.w.QueryRowContext(ctx, `INSERT INTO usage_labels (key_id, key_name, model, channel, status, client_style,
		endpoint, unit) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (key_id, key_name, model, channel, status, client_style, endpoint, unit)
		DO UPDATE SET key_id = excluded.key_id
		RETURNING id`, l.keyID, l.keyName, l.model, l.channel, l.status, l.style, l.endpoint, l.unit).Scan(&id)
	return id, err
}

// maxLabels bounds the label ids kept in memory: up to ~300 bytes each with
// their strings (measured), so some 5 MiB. A gateway sees far fewer labels than that
// in a while; one that sees more (many keys, each over many models and
// channels) looks the others up again, a short transaction each.
const maxLabels = 1 << 14

// keepLabel keeps l's id, first dropping an entry when the map is full: the
// first a range over the map gives, from a place Go picks at random, so
// that the labels used most are seldom the ones dropped. Called with
// labelsMu held.
func (s *sqlStore) keepLabel(l usageLabel, id int64) {
	if len(s.labels) >= cmp.Or(s.labelsMax, maxLabels) {
		for old := range s.labels {
			delete(s.labels, old)
			break
		}
	}
	s.labels[l] = id
}
