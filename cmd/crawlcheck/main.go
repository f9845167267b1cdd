// Command crawlcheck pins the tools of an MCP server in a lockfile and checks
// a live server against it before an agent connects.
//
//	crawlcheck lock    (--tools FILE | --server "CMD ARGS" | --url URL) [-o FILE]
//	crawlcheck check   --lock FILE [--tools FILE | --server … | --url …] [--mode enforce] [--issuer URL]
//	crawlcheck approve --lock FILE [--server … | --url …] [--yes]
//	crawlcheck ci      --lock FILE [--config MCP.json]
//	crawlcheck diff | sign | verify | keygen | convert | canon | record verify
//
// Exit status: 0 proceed (or connect, or valid), 1 blocked (drift, a paused
// or denied check, an invalid signature or record), 2 a usage error or an
// input that could not be read. Every decision is the core's (package
// core, through its op table): this command moves bytes and prints answers.
// See docs/cli.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	preflight "github.com/crawlcheck/verifier/bindings/go"
)

// Exit statuses.
const (
	exitOK      = 0
	exitBlocked = 1
	exitError   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// cli is one invocation: its streams and global flags.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	now            string // --now, RFC 3339; "" means the clock
	timeout        time.Duration
	pageCap        int
	maxInput       byteSize // --max-input: the largest file or server answer read
}

// command is one subcommand.
type command struct {
	usage string
	run   func(c *cli, args []string) error
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"lock":    {"lock (--tools FILE [--url URL] | --server \"CMD ARGS\" | --url URL) [--format crawlcheck|agentgate] [--name NAME] [--sign-key KEYFILE] [-o FILE]", cmdLock},
		"check":   {"check --lock FILE [--tools FILE | --server \"CMD ARGS\" | --url URL] [--mode observe|review|enforce] [--policy FILE] [--expected-policy-version V] [--operator-key PUB]... [--issuer-keys FILE] [--server-name NAME] [--issuer URL [--issuer-pin KID:PUBKEY]... [--issuer-timeout 5s]] [--json] [--log FILE]", cmdCheck},
		"approve": {"approve --lock FILE [--tools FILE | --server \"CMD ARGS\" | --url URL] [--server-name NAME] [--sign-key KEYFILE] [--yes] [-o FILE]", cmdApprove},
		"ci":      {"ci --lock FILE [--config MCP.json] [--json]", cmdCI},
		"diff":    {"diff [--server-name NAME] [--json] OLD NEW", cmdDiff},
		"sign":    {"sign --key KEYFILE [-o OUT] LOCKFILE", cmdSign},
		"verify":  {"verify [--operator-key PUB]... [--issuer-keys FILE] [--json] LOCKFILE", cmdVerify},
		"keygen":  {"keygen -o KEYFILE", cmdKeygen},
		"convert": {"convert --to crawlcheck|agentgate [--name NAME] [--url URL] [--tools FILE] [-o OUT] LOCKFILE", cmdConvert},
		"canon":   {"canon [FILE]", cmdCanon},
		"record":  {"record verify [--after SHA] [--head SHA] FILE", cmdRecord},
	}
}

// order is the order of the usage text.
var order = []string{"lock", "check", "approve", "ci", "diff", "sign", "verify", "keygen", "convert", "canon", "record"}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, timeout: preflight.DefaultTimeout, pageCap: preflight.DefaultPageCap,
		maxInput: defaultMaxInput}
	fs := c.flagSet("crawlcheck")
	fs.Usage = func() { c.usage() }
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	if err := noEmptyValue(fs); err != nil {
		say(stderr, "crawlcheck: %s\n", err)
		return exitError
	}
	if fs.NArg() == 0 {
		c.usage()
		return exitError
	}
	name := fs.Arg(0)
	if name == "help" || name == "-h" {
		c.usage()
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		say(stderr, "crawlcheck: unknown command %q\n", name)
		c.usage()
		return exitError
	}
	err := cmd.run(c, fs.Args()[1:])
	var b *blockedError
	var u *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &b):
		if b.msg != "" {
			say(stderr, "crawlcheck %s: %s\n", name, b.msg)
		}
		return exitBlocked
	case errors.As(err, &u):
		if u.msg != "" {
			say(stderr, "crawlcheck %s: %s\n", name, u.msg)
		}
		say(stderr, "usage: crawlcheck %s\n", cmd.usage)
		return exitError
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	default:
		say(stderr, "crawlcheck %s: %v\n", name, err)
		return exitError
	}
}

func (c *cli) usage() {
	var b strings.Builder
	b.WriteString("usage: crawlcheck [--now RFC3339] [--timeout 10s] [--page-cap 100] [--max-input 16MiB] COMMAND ...\n\n")
	for _, n := range order {
		b.WriteString("  crawlcheck " + commands[n].usage + "\n")
	}
	b.WriteString("\nExit status: 0 proceed, 1 blocked or drift, 2 usage or error. See docs/cli.md.\n")
	io.WriteString(c.stderr, b.String())
}

// flagSet returns a flag set carrying the global flags, so that they may be
// given before the command or after it. Registering them again keeps the
// values parsed so far as the defaults.
func (c *cli) flagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&lineEscaper{w: c.stderr})
	fs.StringVar(&c.now, "now", c.now, "the time of records and approvals, RFC 3339 (default: the clock)")
	fs.DurationVar(&c.timeout, "timeout", c.timeout, "bound on one check of a live server: connect, handshake and every tools/list page")
	fs.IntVar(&c.pageCap, "page-cap", c.pageCap, "most tools/list pages read from a live server")
	fs.Var(&c.maxInput, "max-input", "the largest file, or server answer, read (bytes, or with KiB/MiB; at most 64MiB)")
	return fs
}

// parse parses a command's flags, which may be followed by positional
// arguments; want is how many of those it takes (-1: any).
func (c *cli) parse(fs *flag.FlagSet, args []string, want int) ([]string, error) {
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, &usageError{}
		}
		return nil, &usageError{msg: err.Error()}
	}
	if err := noEmptyValue(fs); err != nil {
		return nil, err
	}
	if c.timeout <= 0 {
		return nil, &usageError{msg: "--timeout must be positive"}
	}
	if c.pageCap <= 0 {
		return nil, &usageError{msg: "--page-cap must be positive"}
	}
	if c.pageCap > maxPageCap {
		return nil, &usageError{msg: fmt.Sprintf("--page-cap %d: at most %d (the pages one check can carry)", c.pageCap, maxPageCap)}
	}
	inputs = readLimits{max: int64(c.maxInput), timeout: c.timeout}
	if want >= 0 && fs.NArg() != want {
		return nil, &usageError{msg: fmt.Sprintf("want %d argument(s), got %d", want, fs.NArg())}
	}
	return fs.Args(), nil
}

// noEmptyValue refuses a flag given with an empty value. "--issuer $URL"
// with URL unset would otherwise turn the service path off, and "--policy="
// fall back to the default policy, without a word: absent must be said by
// leaving the flag out.
func noEmptyValue(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && f.Value.String() == "" {
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			err = usagef("%s%s was given an empty value; leave the flag out to mean none", dash, f.Name)
		}
	})
	return err
}

// clock is the time of this invocation: --now, or the clock.
func (c *cli) clock() (time.Time, error) {
	if c.now == "" {
		return time.Now(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, c.now)
	if err != nil {
		return time.Time{}, &usageError{msg: fmt.Sprintf("--now %q is not an RFC 3339 time", c.now)}
	}
	return t, nil
}

// blockedError ends a command with exit status 1: the answer is "do not
// proceed". The reason has usually been printed already.
type blockedError struct{ msg string }

func (e *blockedError) Error() string { return e.msg }

func blocked(format string, a ...any) error {
	return &blockedError{msg: fmt.Sprintf(format, a...)}
}

// usageError ends a command with exit status 2 and its usage line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	if v == "" {
		return errors.New("an empty value; leave the flag out to mean none")
	}
	*s = append(*s, v)
	return nil
}
