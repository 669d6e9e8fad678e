package testenv

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The log scan: every log line the tests of a package write through
// LogCapture is searched for what must never be logged (credentials,
// payment keys, signed URLs, one-time codes, email addresses, passwords),
// and Main fails the package run when one was found. The whole app tests
// (app/) log through it, at debug level, so the suite's end-to-end paths
// are scanned.

// LogPatterns are what a log line must not hold, by name.
var LogPatterns = map[string]*regexp.Regexp{
	"holdco credential":          regexp.MustCompile(`\b(svc_[uc]_v1_|hco_(at|as)_v1_)[A-Za-z0-9_-]{6,}`),
	"stripe key":                 regexp.MustCompile(`\b(sk|rk)_(test|live)_[A-Za-z0-9]{6,}`),
	"webhook secret":             regexp.MustCompile(`\bwhsec_[A-Za-z0-9]{6,}`),
	"signed URL":                 regexp.MustCompile(`(?i)[?&](x-amz-signature|x-amz-credential|sig|signature)=[^&\s"]{6,}`),
	"one-time code in a URL":     regexp.MustCompile(`[?&](code|login_code|state|token|access_token|code_verifier)=[A-Za-z0-9._~%-]{16,}`),
	"bearer token":               regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}`),
	"JWT":                        regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}`),
	"email address":              regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`),
	"password":                   regexp.MustCompile(`(?i)\b(password|passwd|secret)["']?\s*[=:]\s*["']?[^\s"',}]{4,}`),
	"database URL with password": regexp.MustCompile(`postgres(ql)?://[^:/@\s]+:[^@\s]{1,}@`),
}

// logAllowed are matches that are not secrets: mail domains of the local
// mailbox and documentation addresses the tests use as senders' names are
// still addresses, so nothing is allowed by default; a package may add
// exact strings with AllowInLogs.
var (
	logMu      sync.Mutex
	logAllowed = map[string]bool{}
	logFound   = map[string][]string{} // pattern name → first matches (with their line)
	logLines   int64
)

const maxFindingsPerPattern = 5

// AllowInLogs declares exact strings that may appear in logs (values the
// test itself made up that merely look like one of the patterns).
func AllowInLogs(s ...string) {
	logMu.Lock()
	defer logMu.Unlock()
	for _, v := range s {
		logAllowed[v] = true
	}
}

type logScanner struct{}

// LogCapture is a writer for the tests' loggers: each write (a log line)
// is scanned, nothing is kept but the findings.
func LogCapture() io.Writer { return logScanner{} }

func (logScanner) Write(p []byte) (int, error) {
	found := ScanLogLine(string(p))
	logMu.Lock()
	defer logMu.Unlock()
	logLines++
	for name, matches := range found {
		for _, m := range matches {
			if logAllowed[m] {
				continue
			}
			if len(logFound[name]) < maxFindingsPerPattern {
				line := strings.TrimSpace(string(p))
				if len(line) > 400 {
					line = line[:400] + "…"
				}
				logFound[name] = append(logFound[name], fmt.Sprintf("%q in: %s", m, line))
			}
		}
	}
	return len(p), nil
}

// redacted is what config.Redact puts in place of a password.
const redacted = "xxxxx"

// ScanLogLine returns the matches of every pattern in line.
func ScanLogLine(line string) map[string][]string {
	out := map[string][]string{}
	for name, re := range LogPatterns {
		for _, m := range re.FindAllString(line, -1) {
			if !strings.Contains(m, redacted) {
				out[name] = append(out[name], m)
			}
		}
	}
	return out
}

// logScanReport prints the findings; false when there were some.
func logScanReport(w io.Writer) bool {
	logMu.Lock()
	defer logMu.Unlock()
	if logLines == 0 {
		return true
	}
	if len(logFound) == 0 {
		fmt.Fprintf(w, "log scan: %d log lines, nothing secret\n", logLines)
		return true
	}
	names := make([]string, 0, len(logFound))
	for n := range logFound {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "log scan: FAIL: %d log lines; what must never be logged was:\n", logLines)
	for _, n := range names {
		for _, f := range logFound[n] {
			fmt.Fprintf(w, "  %s: %s\n", n, f)
		}
	}
	return false
}

// exitAfterLogScan is Main's end: the tests' status, failed when the
// logs held a secret.
func exitAfterLogScan(code int) {
	if !logScanReport(os.Stderr) && code == 0 {
		code = 1
	}
	os.Exit(code)
}
