package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/verifier"
)

func worked(t testing.TB) string {
	t.Helper()
	d, err := testonly.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "evidence", "valid", "tavlarena-worked-example.json")
}

// logKey returns the signed-note verifier key of the vectors.
func logKey(t *testing.T) string {
	t.Helper()
	vs, err := testonly.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.LogKey != nil {
			return *v.LogKey
		}
	}
	t.Fatal("no vector has a log key")
	return ""
}

// emitterKey returns an emitter key of the vectors.
func emitterKey(t *testing.T) string {
	t.Helper()
	vs, err := testonly.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if len(v.EmitterKeys) > 0 {
			return v.EmitterKeys[0]
		}
	}
	t.Fatal("no vector has an emitter key")
	return ""
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want Config
	}{
		{[]string{"f.json"}, Config{File: "f.json", Lang: verifier.English}},
		{[]string{"-"}, Config{File: "-", Lang: verifier.English}},
		{[]string{"--json", "--lang", "tr", "f"}, Config{File: "f", JSON: true, Lang: verifier.Turkish}},
		{[]string{"f", "--lang=ar", "-json"}, Config{File: "f", JSON: true, Lang: verifier.Arabic}},
		{[]string{"--json=false", "f"}, Config{File: "f", Lang: verifier.English}},
		{[]string{"--", "--json"}, Config{File: "--json", Lang: verifier.English}},
	}
	for _, tt := range tests {
		got, err := ParseArgs(tt.args)
		if err != nil || got.File != tt.want.File || got.JSON != tt.want.JSON || got.Lang != tt.want.Lang {
			t.Errorf("ParseArgs(%q) = %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
	cfg, err := ParseArgs([]string{"--expected-commitment", "5cj3-5zcz", "f", "--log-key", logKey(t)})
	if err != nil {
		t.Fatalf("ParseArgs with expected and log key: %v", err)
	}
	if cfg.Options.Expected == nil || cfg.Options.Expected.String() != "5CJ3-5ZCZ" || cfg.Options.LogKey == nil {
		t.Errorf("options %+v", cfg.Options)
	}
	bad := []struct {
		args []string
		id   cliMsg
	}{
		{nil, mNoFile},
		{[]string{"a", "b"}, mTooManyFiles},
		{[]string{"--nope", "f"}, mUnknownFlag},
		{[]string{"-x", "f"}, mUnknownFlag},
		{[]string{"f", "--lang"}, mNoValue},
		{[]string{"--lang", "de", "f"}, mBadLang},
		{[]string{"--json=yes", "f"}, mBadBool},
		{[]string{"--expected-commitment", "xyz", "f"}, mBadExpected},
		{[]string{"f", "--expected-commitment"}, mNoValue},
		{[]string{"--log-key", "not-a-key", "f"}, mBadLogKey},
		{[]string{"--emitter-key", "not-a-key", "f"}, mBadEmitterKey},
		{[]string{"--emitter-key", logKey(t), "--emitter-key", logKey(t), "f"}, mBadEmitterKey}, // a log's name is not an emitter id
		{[]string{"f", "--emitter-key"}, mNoValue},
		{[]string{"f", "--witness-policy"}, mNoValue},
		{[]string{"--witness-policy=", "f"}, mNoValue},
	}
	for _, tt := range bad {
		_, err := ParseArgs(tt.args)
		var ue *UsageError
		if !errors.As(err, &ue) || ue.id != tt.id {
			t.Errorf("ParseArgs(%q) = %v, want usage error %d", tt.args, err, tt.id)
		}
	}
	ek := emitterKey(t)
	if _, err := ParseArgs([]string{"--emitter-key", ek, "--emitter-key", ek, "f"}); err == nil || err.(*UsageError).id != mBadEmitterKeys {
		t.Errorf("the same --emitter-key twice: %v", err)
	}
	cfg, err = ParseArgs([]string{"--emitter-key", ek, "f", "--witness-policy", "p.txt"})
	if err != nil || cfg.Options.EmitterKeys == nil || cfg.PolicyFile != "p.txt" {
		t.Errorf("ParseArgs with emitter key and policy: %+v, %v", cfg, err)
	}
	// A usage error speaks the language asked for, wherever --lang is.
	_, err = ParseArgs([]string{"--nope", "f", "--lang", "tr"})
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Lang != verifier.Turkish {
		t.Errorf("usage error %v in %q, want Turkish", err, ue.Lang)
	}
}

func run(t testing.TB, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, bytes.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunExitCodes(t *testing.T) {
	data, err := os.ReadFile(worked(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests := []struct {
		name  string
		stdin []byte
		args  []string
		code  int
		out   string // a substring of stdout
		err   string // a substring of stderr
	}{
		{"file", nil, []string{worked(t)}, 0, "Every roll checked", ""},
		{"stdin", data, []string{"-"}, 0, "Every roll checked", ""},
		{"stdin-turkish", data, []string{"--lang", "tr", "-"}, 0, "Her atış kontrol edildi", ""},
		{"stdin-arabic", data, []string{"-", "--lang=ar"}, 0, "تم التحقق من كل رمية", ""},
		{"expected-seal", data, []string{"--expected-commitment", "5CJ3-5ZCZ", "-"}, 0, "PASS  expected-commitment", ""},
		{"expected-wrong", data, []string{"--expected-commitment", "5CJ3-5ZC0", "-"}, 1, "The proof is INVALID", ""},
		{"empty-stdin", nil, []string{"-"}, 2, "Bad input", ""},
		{"missing-file", nil, []string{filepath.Join(dir, "nope.json")}, 2, "there is no file", ""},
		{"directory", nil, []string{dir}, 2, "is a folder, not a file", ""},
		{"missing-file-tr", nil, []string{"--lang", "tr", filepath.Join(dir, "nope.json")}, 2, "adında bir dosya yok", ""},
		{"directory-ar", nil, []string{"--lang=ar", dir}, 2, "مجلد وليس ملفًا", ""},
		{"bad-flag", data, []string{"--frobnicate", "-"}, 2, "", "unknown flag --frobnicate"},
		{"bad-flag-turkish", data, []string{"--lang", "tr", "--frobnicate", "-"}, 2, "", "bilinmeyen seçenek"},
		{"bad-lang", data, []string{"--lang", "fr", "-"}, 2, "", "unknown language"},
		{"no-file", data, nil, 2, "", "no evidence file"},
		{"help", nil, []string{"--help"}, 0, "usage: zarlog-verify", ""},
		{"help-arabic", nil, []string{"--lang", "ar", "-h"}, 0, "الاستخدام", ""},
		{"policy-missing", data, []string{"--witness-policy", filepath.Join(dir, "nope.txt"), "-"}, 2, "", "cannot read the --witness-policy file"},
		{"policy-malformed", data, []string{"--witness-policy", worked(t), "-"}, 2, "", "is not a C2SP tlog-policy"},
		{"policy-without-log", data, []string{"--witness-policy", policyFile(t), "-"}, 1, "FAIL  log-witnesses", ""},
	}
	for _, tt := range tests {
		code, out, errOut := run(t, tt.stdin, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.name, code, out, errOut, tt.code, tt.out, tt.err)
		}
	}
}

// policyFile returns a witness policy file of the vectors.
func policyFile(t *testing.T) string {
	t.Helper()
	vs, err := testonly.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.WitnessPolicy != nil {
			return v.PolicyPath
		}
	}
	t.Fatal("no vector has a witness policy")
	return ""
}

func TestRunJSON(t *testing.T) {
	code, out, _ := run(t, []byte("[1, 2"), "--json", "-")
	var j verifier.JSONReport
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("--json on bad input: %v\n%s", err, out)
	}
	if code != 2 || j.Exit != 2 || j.Result != "bad-input" || len(j.Checks) != 1 || j.Checks[0].Name != "format" || j.Checks[0].Status != verifier.Fail {
		t.Errorf("exit %d, report %+v", code, j)
	}
	code, out, _ = run(t, nil, "--json", "--lang", "tr", worked(t))
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 || j.Summary != "Her atış kontrol edildi" || j.Lang != verifier.Turkish {
		t.Errorf("exit %d, %v, report %+v", code, err, j)
	}
}

// FuzzRun: the command line's input path never panics, always exits 0, 1
// or 2 and always prints a report.
func FuzzRun(f *testing.F) {
	data, err := os.ReadFile(worked(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, false, "en")
	f.Add([]byte("{}"), true, "tr")
	f.Add([]byte{0xff, 0xfe}, true, "ar")
	f.Fuzz(func(t *testing.T, stdin []byte, asJSON bool, lang string) {
		args := []string{"-", "--lang", lang}
		if asJSON {
			args = append(args, "--json")
		}
		code, out, errOut := run(t, stdin, args...)
		switch {
		case code < 0 || code > 2:
			t.Fatalf("exit %d", code)
		case out == "" && errOut == "":
			t.Fatal("no output")
		case asJSON && out != "" && !json.Valid([]byte(out)):
			t.Fatalf("--json printed %q", out)
		}
	})
}

// TestCLICatalogTranslated: every command-line message passes
// verifier.CheckTexts beside the verifier's own (so one catalog can hold
// both) and is translated.
func TestCLICatalogTranslated(t *testing.T) {
	if err := verifier.CheckTexts(verifier.Texts(), Texts()); err != nil {
		t.Error(err)
	}
	for _, m := range Texts() {
		if m[2] == m[1] || m[3] == m[1] {
			t.Errorf("%s is not translated: %q %q %q", m.Name(), m[1], m[2], m[3])
		}
	}
}

// TestLangFromEnv: without --lang the locale variables choose the
// language, LC_ALL first, then LC_MESSAGES, then LANG; --lang wins over
// them; a locale without messages is English.
func TestLangFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want verifier.Lang
	}{
		{nil, verifier.English},
		{map[string]string{"LANG": "tr_TR.UTF-8"}, verifier.Turkish},
		{map[string]string{"LANG": "ar_EG.UTF-8"}, verifier.Arabic},
		{map[string]string{"LANG": "ar"}, verifier.Arabic},
		{map[string]string{"LANG": "tr_TR.UTF-8", "LC_MESSAGES": "ar_SA.UTF-8"}, verifier.Arabic},
		{map[string]string{"LANG": "tr_TR.UTF-8", "LC_MESSAGES": "ar_SA", "LC_ALL": "en_GB.UTF-8"}, verifier.English},
		{map[string]string{"LC_ALL": "C", "LANG": "tr_TR.UTF-8"}, verifier.English},
		{map[string]string{"LANG": "de_DE.UTF-8"}, verifier.English},
		{map[string]string{"LANG": "tr_TR@euro"}, verifier.Turkish},
	} {
		if got := LangFromEnv(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %s, want %s", c.env, got, c.want)
		}
	}
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	t.Setenv("LANG", "tr_TR.UTF-8")
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"--no-such-flag"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "bilinmeyen seçenek") {
		t.Errorf("LANG=tr_TR.UTF-8, a bad flag: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := Run(context.Background(), []string{"--lang", "en", "--no-such-flag"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unknown flag") {
		t.Errorf("LANG=tr_TR.UTF-8 --lang en, a bad flag: exit %d, %q", code, errb.String())
	}
}

// TestUsageTranslated: the usage's placeholders are words of its language,
// not the English FILE, VKEY and SEALCODE.
func TestUsageTranslated(t *testing.T) {
	for _, l := range []verifier.Lang{verifier.Turkish, verifier.Arabic} {
		u := render(l, mUsage)
		for _, w := range []string{"FILE", "VKEY", "SEALCODE", "HEX|S"} {
			if strings.Contains(u, w) {
				t.Errorf("the %s usage says %q", l, w)
			}
		}
	}
}
