package continuity

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crawlcheck/verifier/core/cerr"
	"github.com/crawlcheck/verifier/core/internal/canon"
	"github.com/crawlcheck/verifier/core/textsafe"
)

// Host faults: what went wrong at the transport, handed to the core as a
// code and a few facts (where it happened, the host's limits), never as the
// host's own error text. The core words the record's detail from them, so a
// down server or a timeout gives byte-identical records in every language
// (issue 18). Each is recorded as FailureUnavailable or FailureTimeout.
const (
	// FaultConnectRefused: the server could not be reached at all — the
	// connection was refused or could not be made, or the stdio command
	// could not be started.
	FaultConnectRefused = "connect_refused"
	// FaultTimeout: the check's deadline passed before the answer
	// (timeout_ms, when the host gives it, is the deadline).
	FaultTimeout = "timeout"
	// FaultCancelled: the check was cancelled (by the host's caller) before
	// the answer; recorded as check_timeout, as any deadline.
	FaultCancelled = "cancelled"
	// FaultProcessExited: the stdio server's process exited, or closed its
	// output, before answering.
	FaultProcessExited = "process_exited"
	// FaultCommandNotFound: the stdio command could not be started because
	// no program of its name exists (a mistyped command); failure_command
	// names it. connect_refused stays the fault of a command that exists
	// and could not be started.
	FaultCommandNotFound = "command_not_found"
	// FaultSessionEnded: the connection closed before the answer (an HTTP
	// stream ended, the transport was closed under the session).
	FaultSessionEnded = "session_ended"
	// FaultSessionFailed: the host's MCP SDK failed the request for a
	// reason of its own (an HTTP error status, a protocol error); the
	// server did not answer the request with a result.
	FaultSessionFailed = "session_failed"
	// FaultPagesOverCap: the pages read so far are more bytes together than
	// one check can carry (MaxPagesBytes); none is kept.
	FaultPagesOverCap = "pages_over_cap"
	// FaultUnauthorized: the server answered HTTP 401: it wants
	// credentials the host did not send (or that it no longer takes). The
	// record says what to do: log in, or send a header.
	FaultUnauthorized = "unauthorized"
	// FaultForbidden: the server answered HTTP 403: the credentials sent
	// are not allowed what was asked (a scope too narrow, another
	// resource's token refused).
	FaultForbidden = "forbidden"
	// FaultListCached: the host's MCP SDK answered a tools/list without a
	// request on the wire (its own list cache): nothing live was read.
	FaultListCached = "list_cached"
	// FaultNotCaptured: the host's MCP SDK accepted a tools/list answer
	// the capture did not see, so its bytes cannot be checked.
	FaultNotCaptured = "answer_not_captured"
)

// captureWords is what each capture failure says, after capture_failed:
// the same words for every host, where each host had its own copy.
var captureWords = map[string]string{
	FaultListCached:  "answered by the SDK without a tools/list request on the wire (its list cache)",
	FaultNotCaptured: "the SDK accepted an answer that was not captured",
}

// MaxPagesBytes is the most bytes of pages one check carries: the core's
// request cap (core.MaxRequestBytes).
const MaxPagesBytes = canon.MaxBytes

// HostFailures are the failures a host may report (observed.failure,
// lock_check's failure): the classes themselves (with a detail of the
// host's, for a host that cannot say more), an answer past the host's
// limit, the capture's own failures, and the host faults the core words.
var HostFailures = []string{FailureUnavailable, FailureTimeout, FailureTooLarge, FaultListCached, FaultNotCaptured,
	FaultConnectRefused, FaultTimeout, FaultCancelled, FaultProcessExited, FaultSessionEnded, FaultSessionFailed, FaultPagesOverCap,
	FaultCommandNotFound, FaultUnauthorized, FaultForbidden}

// Fault is a host's failure as it hands it to the core.
type Fault struct {
	Failure string // one of HostFailures
	Detail  string // failure_detail: the host's text (server_unavailable, check_timeout) or answer_too_large's limit
	At      string // failure_at: "handshake" or "tools/list"; required with a host fault
	Page    int    // failure_page: the tools/list page (1 on), with At "tools/list"
	// TimeoutMS is timeout_ms: the deadline in milliseconds, 0 when the
	// host does not give it (timeout only).
	TimeoutMS int
	// Command is failure_command: the program command_not_found could not
	// find, as the host tried to start it (required with that fault only).
	Command string
	// ExitStatus is exit_status, with process_exited only: the status the
	// server's process exited with, when the host knows it (HasExit).
	ExitStatus int
	HasExit    bool
	// StderrTail is stderr_tail, with process_exited only: the end of what
	// the process wrote to its stderr, as the host kept it; the core words
	// its last lines, bounded and escaped.
	StderrTail string
	// ResourceMetadata is resource_metadata (unauthorized and forbidden
	// only): the URL of the server's protected resource metadata, as its
	// WWW-Authenticate named it (RFC 9728), "" when it named none. The
	// server's text: shown escaped.
	ResourceMetadata string
	// Endpoint is the endpoint observed, named in the login hint; "" when
	// the request names none.
	Endpoint string
}

// Bounds of what a record carries of an exited process's stderr: its last
// tailLines lines that are not blank, each at most tailLineBytes.
const (
	tailLines     = 3
	tailLineBytes = 160
)

// Fault steps (failure_at).
const (
	AtHandshake = "handshake"
	AtToolsList = "tools/list"
)

// faultWords is what each host fault says, after where it happened.
var faultWords = map[string]string{
	FaultConnectRefused: "the server could not be reached (the connection was refused or could not be made, or its command could not be started)",
	FaultCancelled:      "the check was cancelled before the server answered",
	FaultProcessExited:  "the server's process exited before answering",
	FaultSessionEnded:   "the connection closed before the server answered",
	FaultSessionFailed:  "the MCP session failed before the server answered with a result",
}

// HostFailure maps a host's failure to what a record and a lock_check
// answer carry: the class (server_unavailable or check_timeout) and the
// detail, which the core words for every failure but the two classes
// given as they are. A capture failure (list_cached, answer_not_captured)
// is worded behind capture_failed, with no detail of the host's;
// answer_too_large is worded from its limit (a detail that is not a
// positive decimal byte count is refused); a host fault is worded from its
// code and facts, and carries no text of the host's (failure_detail is
// refused with one).
func HostFailure(f Fault) (string, string, error) {
	if f.Failure == "" {
		if f.At != "" || f.Page != 0 || f.TimeoutMS != 0 {
			return "", "", cerr.New(cerr.BadRequest, "failure_at, failure_page and timeout_ms go with a failure")
		}
		return "", f.Detail, nil
	}
	_, isCapture := captureWords[f.Failure]
	isFault := f.Failure != FailureUnavailable && f.Failure != FailureTimeout && f.Failure != FailureTooLarge && !isCapture
	if !isFault && (f.At != "" || f.Page != 0 || f.TimeoutMS != 0) {
		return "", "", cerr.New(cerr.BadRequest, "failure_at, failure_page and timeout_ms go with a host fault (connect_refused, timeout, …), not with %s", f.Failure)
	}
	if isCapture && f.Detail != "" {
		return "", "", cerr.New(cerr.BadRequest, "failure_detail does not go with %s: the core words a capture failure from its code", f.Failure)
	}
	switch f.Failure {
	case FaultListCached, FaultNotCaptured:
		return FailureUnavailable, FailureCapture + ": " + captureWords[f.Failure], nil
	case FailureTooLarge:
		n, err := strconv.ParseUint(f.Detail, 10, 63)
		if err != nil || n == 0 || strconv.FormatUint(n, 10) != f.Detail {
			return "", "", cerr.New(cerr.BadRequest, "failure_detail of %s is the answer limit in bytes, a positive decimal integer; got %q", FailureTooLarge, f.Detail)
		}
		return FailureUnavailable, "the server sent an answer of more than " + f.Detail + " bytes: not read further", nil
	case FailureUnavailable, FailureTimeout:
		return f.Failure, f.Detail, nil
	}
	if f.Detail != "" {
		return "", "", cerr.New(cerr.BadRequest, "failure_detail does not go with %s: the core words a host fault from its code and facts", f.Failure)
	}
	var where string
	switch {
	case f.At == AtHandshake && f.Page == 0:
		where = "the handshake"
	case f.At == AtToolsList && f.Page > 0:
		where = "tools/list page " + strconv.Itoa(f.Page)
	default:
		return "", "", cerr.New(cerr.BadRequest, "%s needs failure_at: \"handshake\", or \"tools/list\" with failure_page (1 on)", f.Failure)
	}
	if f.TimeoutMS != 0 && f.Failure != FaultTimeout {
		return "", "", cerr.New(cerr.BadRequest, "timeout_ms goes with timeout only")
	}
	if (f.Command != "") != (f.Failure == FaultCommandNotFound) {
		return "", "", cerr.New(cerr.BadRequest, "failure_command goes with command_not_found, which needs it (the program not found)")
	}
	if (f.HasExit || f.StderrTail != "") && f.Failure != FaultProcessExited {
		return "", "", cerr.New(cerr.BadRequest, "exit_status and stderr_tail go with process_exited only")
	}
	authFault := f.Failure == FaultUnauthorized || f.Failure == FaultForbidden
	if f.ResourceMetadata != "" && !authFault {
		return "", "", cerr.New(cerr.BadRequest, "resource_metadata goes with unauthorized and forbidden only")
	}
	if authFault {
		return FailureUnavailable, where + ": " + authWords(f), nil
	}
	switch f.Failure {
	case FaultTimeout:
		if f.TimeoutMS == 0 {
			return FailureTimeout, where + ": no answer before the check's deadline", nil
		}
		return FailureTimeout, where + ": no answer within " + duration(f.TimeoutMS), nil
	case FaultCancelled:
		return FailureTimeout, where + ": " + faultWords[f.Failure], nil
	case FaultCommandNotFound:
		if f.At != AtHandshake {
			return "", "", cerr.New(cerr.BadRequest, "%s happens at the handshake", f.Failure)
		}
		return FailureUnavailable, where + ": command not found: " + clipLine(f.Command), nil
	case FaultProcessExited:
		words := where + ": " + faultWords[f.Failure]
		var facts []string
		if f.HasExit {
			facts = append(facts, "exit status "+strconv.Itoa(f.ExitStatus))
		}
		if tail := stderrTail(f.StderrTail); tail != "" {
			facts = append(facts, "the end of its stderr: "+tail)
		}
		if len(facts) > 0 {
			words += " (" + strings.Join(facts, "; ") + ")"
		}
		return FailureUnavailable, words, nil
	case FaultPagesOverCap:
		if f.At != AtToolsList {
			return "", "", cerr.New(cerr.BadRequest, "%s happens at tools/list", f.Failure)
		}
		return FailureUnavailable, where + ": the pages so far exceed " + strconv.Itoa(MaxPagesBytes) + " bytes, more than one check can carry", nil
	}
	return FailureUnavailable, where + ": " + faultWords[f.Failure], nil
}

// authWords is what a 401 or 403 says: the status, what it means, what
// to do about it (the command that logs in to this endpoint, or a header),
// and the resource metadata URL the server named, escaped, since it is the
// server's text. A header's value never reaches the core: nothing secret
// can be worded here.
func authWords(f Fault) string {
	login := "crawlcheck login --url URL"
	if f.Endpoint != "" {
		login = "crawlcheck login --url " + textsafe.Escape(f.Endpoint)
	}
	var s string
	if f.Failure == FaultUnauthorized {
		s = "the server answered HTTP 401 (it needs credentials): log in with `" + login + "`, or send its credentials with --header, --header-env or --header-file"
	} else {
		s = "the server answered HTTP 403 (the credentials sent are not allowed this): log in again with `" + login + "` for the scope it needs, or send other credentials with --header, --header-env or --header-file"
	}
	if f.ResourceMetadata != "" {
		s += "; its resource metadata: " + textsafe.Escape(f.ResourceMetadata)
	}
	return s
}

// duration words a deadline in milliseconds: whole seconds as "10 s", the
// rest as "1500 ms".
func duration(ms int) string {
	if ms%1000 == 0 {
		return strconv.Itoa(ms/1000) + " s"
	}
	return strconv.Itoa(ms) + " ms"
}

// stderrTail words the end of a process's stderr for a record: its last
// tailLines lines that are not blank, each clipped and quoted, joined with
// " | ". The text is the server's: kept as it is in the record, like every
// string of a server's there, and shown through the one escape rule
// (textsafe, escape_text) wherever a person reads it.
func stderrTail(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	for i, l := range lines {
		lines[i] = "\"" + clipLine(l) + "\""
	}
	return strings.Join(lines, " | ")
}

// clipLine is one line kept in a record: at most tailLineBytes of it,
// whole characters.
func clipLine(s string) string {
	if len(s) > tailLineBytes {
		i := tailLineBytes
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "…"
	}
	return s
}
