package ingest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/wire"
)

// TestDocumentedCodes: docs/FORMATS.md §1.5 lists exactly the codes the
// ledger and the ingest refuse with: events.Codes() (each produced by
// events' TestApplyRejects or the ledger's TestAppendOutcomes), the
// ledger's internal and its limits' over-limit and game-too-large
// (TestOpenGameLimits, TestOpenGameBytesLimits), and the ingest's bad-batch
// (TestRejected) and bad-subject (TestBadSubject).
func TestDocumentedCodes(t *testing.T) {
	b, err := os.ReadFile("../../docs/FORMATS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### 1.5 Rejection codes")
	end := strings.Index(doc, "### 1.6")
	if start < 0 || end < start {
		t.Fatal("no §1.5 in docs/FORMATS.md")
	}
	sec := doc[start:end]
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(sec, -1) {
		documented = append(documented, m[1])
	}
	para := sec[strings.Index(sec, "The transport adds"):]
	for _, m := range regexp.MustCompile("`([a-z0-9-]+)` \\(").FindAllStringSubmatch(para, -1) {
		documented = append(documented, m[1])
	}
	var want []string
	for _, c := range events.Codes() {
		want = append(want, string(c))
	}
	want = append(want, string(ledger.CodeInternal), string(ledger.CodeOverLimit), string(ledger.CodeGameTooLarge), string(CodeBadBatch), string(CodeBadSubject))
	slices.Sort(documented)
	slices.Sort(want)
	if !slices.Equal(documented, want) {
		t.Errorf("docs/FORMATS.md §1.5 lists\n%v\nthe code has\n%v", documented, want)
	}
}

// TestBadSubject: a message on an events subject whose emitter token is
// not a valid emitter id is refused bad-subject, with the subject in the
// reason (not judged as another emitter's event).
func TestBadSubject(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	runIngest(t, in)
	js, err := jetstream.New(clientConn(t, s, "UPPER"))
	if err != nil {
		t.Fatal(err)
	}
	_, data := makeEvent("acme", "g", 0)
	subject := wire.Subjects{}.Events("UPPER")
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data}); err != nil {
		t.Fatal(err)
	}
	sink.waitUntil(t, ctx, func() bool { return len(sink.rejected) == 1 }, "the refusal")
	sink.mu.Lock()
	defer sink.mu.Unlock()
	r := sink.rejected[0]
	if r.Code != string(CodeBadSubject) || !strings.Contains(r.Reason, subject) || r.Emitter != "UPPER" {
		t.Errorf("refused %+v, want bad-subject naming the subject", r)
	}
}
