module github.com/zarlog/zarlog

go 1.26.8

require github.com/gowebpki/jcs v1.0.2
