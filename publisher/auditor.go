package publisher

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"os"
	"regexp"
	"strings"

	"github.com/zarlog/zarlog/verifier"
)

// Auditor returns the single-file offline auditor (the nard.gg "download
// the audit program" idea, seed 001): one self-contained HTML file that
// verifies a proof file the user opens or drops on it, with the same
// verification code as the game pages (web/verify.js) and every message in
// English, Turkish and Arabic. Its Content-Security-Policy (a meta element)
// allows only its own inline script and style, by hash, and no connection
// at all. logKey, if not empty, is the log verifier key it checks
// checkpoints against (the user can change it).
//
// The output depends only on logKey and the embedded files, so a published
// auditor can be rebuilt and compared byte for byte.
func Auditor(logKey string) ([]byte, error) {
	script, style, err := auditorAssets()
	if err != nil {
		return nil, err
	}
	cat := wordsOf(scriptTexts())
	var uiTexts []verifier.Text
	for _, k := range []string{"LogKeyLabel", "ExpectedLabel", "BrowserNotWitness", "ColKindOrRoll", "ColDice",
		"Kind-opening", "Kind-reroll", "Kind-turn", "Language"} {
		uiTexts = append(uiTexts, pageWords[k])
	}
	ui := wordsOf(uiTexts)
	catJSON, err1 := json.Marshal(cat)
	uiJSON, err2 := json.Marshal(ui)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("publisher: auditor: encoding the messages: %v %v", err1, err2)
	}
	src, err := webFS.ReadFile("web/auditor.tmpl.html")
	if err != nil {
		return nil, fmt.Errorf("publisher: auditor: %w", err)
	}
	t, err := template.New("auditor").Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("publisher: auditor: parsing its template: %w", err)
	}
	data := struct {
		CSP          string
		Style        template.CSS
		Script       template.JS
		Messages, UI string
		LogKey       string
	}{auditorPolicy(script, style), template.CSS(style), template.JS(script), string(catJSON), string(uiJSON), strings.TrimSpace(logKey)}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("publisher: auditor: %w", err)
	}
	return b.Bytes(), nil
}

// WriteAuditor writes the offline auditor (Auditor) to the file path, for
// publishing beside the log.
func WriteAuditor(path, logKey string) error {
	b, err := Auditor(logKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("publisher: writing the auditor: %w", err)
	}
	return nil
}

// auditorAssets returns the auditor's one script (the verifier, the report
// renderer and its page code) and its style.
func auditorAssets() (script, style string, err error) {
	var js strings.Builder
	for _, f := range []string{"verify.js", "ui.js", "auditor.js"} {
		b, err := webFS.ReadFile("web/" + f)
		if err != nil {
			return "", "", fmt.Errorf("publisher: auditor: %w", err)
		}
		if bytes.Contains(b, []byte("</")) {
			return "", "", fmt.Errorf("publisher: auditor: web/%s contains \"</\", which would end its inline script", f)
		}
		js.Write(b)
		js.WriteString("\n")
	}
	css, err := webFS.ReadFile("web/style.css")
	if err != nil {
		return "", "", fmt.Errorf("publisher: auditor: %w", err)
	}
	return js.String(), string(css), nil
}

// auditorPolicy is the auditor's Content-Security-Policy: its inline script
// and style by hash, data: images, and nothing else: no connection, no
// form, no other script.
func auditorPolicy(script, style string) string {
	hash := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
	}
	return "default-src 'none'; script-src " + hash(script) + "; style-src " + hash(style) +
		"; img-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'"
}

var metaCSP = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)

// auditorCSP returns the policy written in an auditor file, to send as a
// header too when the file is served.
func auditorCSP(file []byte) string {
	m := metaCSP.FindSubmatch(file)
	if m == nil {
		return "default-src 'none'"
	}
	return html.UnescapeString(string(m[1]))
}
