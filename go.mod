module github.com/zarlog/zarlog

go 1.26.8

require github.com/gowebpki/jcs v1.0.2

require golang.org/x/mod v0.43.0
