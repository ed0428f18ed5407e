package store

// usage_minute_units (migration 0007) is usage_minutes' share of the units
// other than tokens: per key, minute and unit, the sum of the units of the
// key's rows of that minute. Most batches have no units and write nothing
// here; one that has writes a single upsert. Retention takes deleted rows'
// units off and deletes an entry left with none.

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"maps"
	"slices"
	"strconv"
)

type unitKey struct {
	keyID, minute int64
	unit          string
}

// unitSum is an entry's units.
type unitSum struct {
	unitKey
	units int64
}

// minuteUnits sums the units of rows, by key, minute and unit.
func minuteUnits(rows []Usage) map[unitKey]int64 {
	m := make(map[unitKey]int64)
	for i := range rows {
		if u := &rows[i]; u.Units != 0 {
			m[unitKey{u.KeyID, minuteOf(toNS(u.Time)), u.Unit}] += u.Units
		}
	}
	return m
}

// compareUnitKeys orders entries as sortedMinutes does, then by unit (in
// Go's order, whatever the database's collation): two transactions lock
// the entries they share in the same order.
func compareUnitKeys(a, b unitKey) int {
	return cmp.Or(cmp.Compare(a.keyID, b.keyID), cmp.Compare(a.minute, b.minute), cmp.Compare(a.unit, b.unit))
}

// addMinuteUnits adds the units of rows to usage_minute_units in the
// transaction open on dc, in one statement. Integers are written as
// literals and each unit name is a parameter: a batch names few units, so
// the statement stays far from the databases' limits on parameters.
func addMinuteUnits(ctx context.Context, dc any, rows []Usage) error {
	m := minuteUnits(rows)
	if len(m) == 0 {
		return nil
	}
	q := []byte("INSERT INTO usage_minute_units (key_id, minute, unit, units) VALUES ")
	var args []driver.NamedValue
	param := map[string]int{} // unit → its parameter's number
	for i, k := range slices.SortedFunc(maps.Keys(m), compareUnitKeys) {
		n, ok := param[k.unit]
		if !ok {
			n = len(args) + 1
			param[k.unit] = n
			args = append(args, driver.NamedValue{Ordinal: n, Value: k.unit})
		}
		if i > 0 {
			q = append(q, ',')
		}
		q = strconv.AppendInt(append(q, '('), k.keyID, 10)
		q = strconv.AppendInt(append(q, ','), k.minute, 10)
		q = strconv.AppendInt(append(q, ",$"...), int64(n), 10)
		q = append(strconv.AppendInt(append(q, ','), m[k], 10), ')')
	}
	q = append(q, ` ON CONFLICT (key_id, minute, unit) DO UPDATE SET units = usage_minute_units.units + excluded.units`...)
	_, err := dc.(driver.ExecerContext).ExecContext(ctx, string(q), args)
	return err
}

// subtractMinuteUnits takes the units of the rows of ids lo to hi older
// than t (in ns) off usage_minute_units, before they are deleted, and
// deletes the entries left with none. Only rows with units are read.
func subtractMinuteUnits(ctx context.Context, tx *sql.Tx, lo, hi, t int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT l.key_id, r.time_ns / `+strconv.Itoa(minuteNS)+`, l.unit,
		CAST(SUM(u.units) AS BIGINT) FROM `+unitRowsFrom+`
		AND u.id >= $1 AND u.id <= $2 AND r.time_ns < $3 GROUP BY 1, 2, 3`, lo, hi, t)
	if err != nil {
		return err
	}
	gone, err := collect(rows, func(row rowScanner) (g unitSum, err error) {
		return g, row.Scan(&g.keyID, &g.minute, &g.unit, &g.units)
	})
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return nil
	}
	slices.SortFunc(gone, func(a, b unitSum) int { return compareUnitKeys(a.unitKey, b.unitKey) })
	sub, err := tx.PrepareContext(ctx, `UPDATE usage_minute_units SET units = units - $4
		WHERE key_id = $1 AND minute = $2 AND unit = $3`)
	if err != nil {
		return err
	}
	defer sub.Close()
	first, last := gone[0].minute, gone[0].minute
	for _, g := range gone {
		if _, err := sub.ExecContext(ctx, g.keyID, g.minute, g.unit, g.units); err != nil {
			return err
		}
		first, last = min(first, g.minute), max(last, g.minute)
	}
	// The entries left with none, in one statement: the keys' range (gone
	// is sorted by key) leads the primary key, the minutes' narrows it.
	_, err = tx.ExecContext(ctx, `DELETE FROM usage_minute_units
		WHERE key_id >= $1 AND key_id <= $2 AND minute >= $3 AND minute <= $4 AND units = 0`,
		gone[0].keyID, gone[len(gone)-1].keyID, first, last)
	return err
}

// unitRowsFrom joins the rows that have units to their labels, starting
// from usage_units: a query through it reads those rows only, not every
// row of its range of ids. CROSS JOIN keeps SQLite to that order. It ends
// in a WHERE clause that more conditions follow with AND.
const unitRowsFrom = `usage_units u CROSS JOIN usage_rows r CROSS JOIN usage_labels l
	WHERE r.id = u.id AND l.id = r.label_id`
