package merkle

// ParseSignedCheckpoint parses a signed checkpoint note without verifying any
// of its signatures: the signed-note syntax (UTF-8, no control characters
// but newlines, a blank line, at least one well-formed signature line) and a
// checkpoint text as ParseCheckpoint accepts it. It is for a party that
// already trusts the note, such as a publisher reading its own log's latest
// checkpoint, or a verifier that was given no log key and says so. Errors
// wrap ErrMalformed.
func ParseSignedCheckpoint(msg []byte) (Checkpoint, error) {
	text, _, err := splitNote(msg)
	if err != nil {
		return Checkpoint{}, err
	}
	return ParseCheckpoint(text)
}
