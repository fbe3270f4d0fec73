package ledger

// AppendRaw appends leaves through the tree builder and Pebble only (see
// appendRaw), for the comparison with Tessera in package ledger_test.
func (l *Ledger) AppendRaw(leaves [][]byte) error { return l.appendRaw(leaves) }
