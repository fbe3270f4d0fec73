module github.com/zarlog/zarlog

go 1.26.8

require (
	github.com/gowebpki/jcs v1.0.2
	github.com/transparency-dev/merkle v0.0.2
	golang.org/x/mod v0.43.0
)

require (
	github.com/cloudflare/circl v1.6.5
	github.com/transparency-dev/formats v0.0.0-20251017110053-404c0d5b696c
)

require (
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
