package verifier

// MessageCatalog returns every message of the verifier's reports, keyed by
// a stable name (the message's identifier in this package without its "m",
// such as "RoFail" or "SuPass"), each in English, Turkish and Arabic: Go
// format strings whose arguments have explicit indexes (%[1]s, %[2]d,
// %[3]q). It is for renderers outside Go, such as the browser verifier of
// package publisher, which must say exactly what zarlog-verify says. The
// map is new on every call.
func MessageCatalog() map[string][3]string {
	out := make(map[string][3]string, len(catalog))
	for _, m := range catalog {
		out[m[0]] = [3]string{m[1], m[2], m[3]}
	}
	return out
}
