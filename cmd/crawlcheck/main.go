// Command crawlcheck pins the tools of an MCP server in a lockfile and checks
// a live server against it before an agent connects.
//
//	crawlcheck lock    (--tools FILE | --server "CMD ARGS" | --url URL | --sse URL) [-o FILE]
//	crawlcheck check   --lock FILE [--tools FILE | --server … | --url …] [--mode enforce] [--issuer URL]
//	crawlcheck approve --lock FILE [--server … | --url …] [--yes]
//	crawlcheck ci      --lock FILE [--config MCP.json]
//	crawlcheck scan    (--tools FILE | --server "CMD ARGS" | --url URL | --sse URL) [--fail-on high]
//	crawlcheck tools   (--server "CMD ARGS" | --url URL | --sse URL) [-o FILE]
//	crawlcheck diff | sign | verify | keygen | convert | canon | record verify | log verify
//	crawlcheck help [COMMAND]
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

	"github.com/crawlcheck/verifier/internal/preflight"
)

// Exit statuses.
const (
	exitOK      = 0
	exitBlocked = 1
	exitError   = 2
)

func main() {
	raiseGC()
	watchSignals()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// cli is one invocation: its streams and global flags.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	now            string // --now, RFC 3339; "" means the clock
	timeout        time.Duration
	pageCap        int
	capabilities   string   // --capabilities: what the MCP client declares
	handshake      string   // --handshake: newest or initialize
	maxInput       byteSize // --max-input: the largest file or server answer read
	helping        string   // the command whose help the next parse prints
}

// command is one subcommand: its usage line, what it does, and an example
// (crawlcheck help CMD).
type command struct {
	usage   string
	run     func(c *cli, args []string) error
	summary string
	example string
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"lock": {"lock (--tools FILE [--url URL] | --server \"CMD ARGS\" | --url URL | --sse URL) [--format crawlcheck|agentgate] [--name NAME] [--sign-key KEYFILE] [-o FILE]", cmdLock,
			"Pins the tools of a server in a new lockfile (a live list not read whole is never pinned).",
			"crawlcheck lock --url http://127.0.0.1:8080/mcp -o crawlcheck.lock.json"},
		"check": {"check --lock FILE [--tools FILE | --server \"CMD ARGS\" | --url URL | --sse URL] [--mode observe|review|enforce] [--policy FILE] [--expected-policy-version V] [--operator-key PUB]... [--issuer-keys FILE] [--server-name NAME] [--issuer URL [--issuer-pin KID:PUBKEY]... [--issuer-timeout 5s]] [--json] [--log FILE [--pilot URL,ID,TOKEN-FILE[,KEY-FILE]]]", cmdCheck,
			"Checks a server's tools against the approved lockfile and prints the continuity record's effect.",
			"crawlcheck check --lock crawlcheck.lock.json --mode enforce --log checks.jsonl"},
		"approve": {"approve --lock FILE [--tools FILE | --server \"CMD ARGS\" | --url URL | --sse URL] [--server-name NAME] [--sign-key KEYFILE] [--yes [--features]] [-o FILE]", cmdApprove,
			"Shows what changed against the lockfile, asks, and writes the re-approved lockfile.",
			"crawlcheck approve --lock crawlcheck.lock.json --sign-key operator.key"},
		"ci": {"ci (--lock FILE [--config FILE] | --config FILE) [--client NAME] [--json]", cmdCI,
			"The drift gate: checks every server of the lockfile, and with --config every server a client's config starts (one the lockfile does not pin drifts; disabled ones are skipped, unexpandable ones refused, by name).",
			"crawlcheck ci --lock agentgate.lock --config .mcp.json"},
		"install": {"install --client NAME [--config FILE] [--dry-run] [--yes]", cmdInstall,
			"Puts crawlcheck run between a client and each of its stdio servers: each entry wrapped in place, its tools approved into a lockfile beside the config (docs/clients.md).",
			"crawlcheck install --client claude-desktop"},
		"uninstall": {"uninstall --client NAME [--config FILE]", cmdUninstall,
			"Gives each entry install wrapped back the bytes it had; lockfiles and logs are kept.",
			"crawlcheck uninstall --client claude-desktop"},
		"scan": {"scan (--tools FILE | --server \"CMD ARGS\" | --url URL | --sse URL) [--fail-on low|medium|high|off] [--json]", cmdScan,
			"Prints the approval scan of a tool list (docs/scan.md); exit 1 at or above --fail-on.",
			"crawlcheck scan --url http://127.0.0.1:8080/mcp --fail-on medium"},
		"diff": {"diff [--server-name NAME] [--json] OLD NEW", cmdDiff,
			"What changed between OLD (a lockfile, a tool array or a tools/list page) and NEW (a tool array or a page).",
			"crawlcheck diff crawlcheck.lock.json tools.json"},
		"sign": {"sign --key KEYFILE [-o OUT] LOCKFILE", cmdSign,
			"Signs a crawlcheck lockfile with the operator key.",
			"crawlcheck sign --key operator.key -o signed.lock.json crawlcheck.lock.json"},
		"verify": {"verify [--operator-key PUB]... [--issuer-keys FILE] [--json] LOCKFILE", cmdVerify,
			"Reads a lockfile strictly and verifies its signature.",
			"crawlcheck verify crawlcheck.lock.json --operator-key operator.key.pub"},
		"keygen": {"keygen -o KEYFILE", cmdKeygen,
			"Makes an operator key: KEYFILE (the seed, mode 0600) and KEYFILE.pub.",
			"crawlcheck keygen -o operator.key"},
		"convert": {"convert --to crawlcheck|agentgate [--name NAME] [--url URL] [--tools FILE] [-o OUT] LOCKFILE", cmdConvert,
			"Converts a lockfile between the crawlcheck and agentgate.lock formats where the information allows.",
			"crawlcheck convert --to agentgate --name shop -o agentgate.lock crawlcheck.lock.json"},
		"canon": {"canon [FILE]", cmdCanon,
			"Writes the RFC 8785 canonical bytes of a JSON file (or stdin), parsed strictly.",
			"crawlcheck canon tools.json"},
		"record": {"record verify [--after SHA] [--head SHA] FILE", cmdRecord,
			"Verifies a record's record_sha256, or every record and link of a JSON-lines log, from its anchor (its first record, or --after SHA) and, with --head SHA, to a head kept elsewhere.",
			"crawlcheck record verify checks.jsonl"},
		"log": {"log verify --issuer URL [--proof FILE] FILE | log monitor --issuer URL --state FILE [--server URL]", cmdLog,
			"verify: a lockfile or receipt the issuer signed is in its transparency log (by FILE.tlog-proof) and the log it serves now extends that proof's checkpoint. monitor: one poll; the log's checkpoint is consistent with the one kept in --state, and the new entries about --server are listed (docs/log.md).",
			"crawlcheck log verify --issuer https://issuer.example crawlcheck.lock.json"},
		"login": {"login --url URL [--no-browser] [--client-id-url URL]", cmdLogin,
			"Logs in to a server behind an OAuth login (the MCP authorization spec: discovery, registration, PKCE, a loopback redirect) and keeps its token for lock, check, approve, scan and ci, in a file only you can read (docs/remote.md).",
			"crawlcheck login --url https://mcp.example.com/mcp"},
		"logout": {"logout --url URL", cmdLogout,
			"Forgets the token kept for a server (it is not revoked at the authorization server).",
			"crawlcheck logout --url https://mcp.example.com/mcp"},
		"corrections": {"corrections --issuer URL [--json] RECORDS.jsonl", cmdCorrections,
			"The corrections the issuer published for the records of a record log (by record_sha256 and the receipt each relied on), each with its version, reason and reporter, the rule table or policy version that applies now, and whether its signature verifies (docs/issuer.md).",
			"crawlcheck corrections --issuer https://issuer.example checks.jsonl"},
		"run": {"run --lock FILE [--mode observe|review|enforce] [--policy FILE] [--log FILE] [--operator-key PUB]... (-- CMD ARGS... | --url URL [--sse] [--header 'Name: value']...)", cmdRun,
			"The gateway: an MCP server on stdin/stdout that starts CMD as its child, or reaches the remote server at URL as its OAuth client, checks the session it bridges and hands the client only the tools the record covers (docs/gateway.md). Exits with the server's status.",
			"crawlcheck run --lock server.lock.json --log checks.jsonl -- npx -y @modelcontextprotocol/server-memory"},
		"proxy": {"proxy --upstream URL --lock FILE [--listen 127.0.0.1:PORT] [--log FILE] [--header 'Name: value']... [--token-file FILE]", cmdProxy,
			"A local streamable HTTP endpoint for clients that speak HTTP only: each session a gateway in front of the remote server, on loopback, behind a token of its own that is never sent upstream (docs/gateway.md).",
			"crawlcheck proxy --listen 127.0.0.1:8931 --upstream https://mcp.example.com/mcp --lock server.lock.json"},
		"tools": {"tools (--server \"CMD ARGS\" | --url URL | --sse URL) [-o FILE]", cmdTools,
			"Writes a server's tools/list answer, every tool as sent, as the file --tools and the offline page take.",
			"crawlcheck tools --server \"npx -y @modelcontextprotocol/server-everything\" -o tools.json"},
		"version": {"version", cmdVersion,
			"Prints the version, the commit it was built from and the core's engine (also crawlcheck --version).",
			"crawlcheck version"},
		"report": {"report [--week 2026-W48] [--json] [-o FILE] RECORDS.jsonl", cmdReport,
			"The weekly report of a record log: checks per day by effect, observations by class, the changes your agents met with their diffs and scan, exceptions and their expiry, the actionable count; HTML with SVG charts (no script), or --json (docs/report.md).",
			"crawlcheck report --week 2026-W48 -o report.html checks.jsonl"},
	}
}

// order is the order of the usage text.
var order = []string{"lock", "check", "approve", "run", "proxy", "ci", "install", "uninstall", "scan", "login", "logout", "diff", "sign", "verify", "keygen", "convert", "canon", "record", "log", "report", "corrections", "tools", "version"}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, timeout: preflight.DefaultTimeout, pageCap: preflight.DefaultPageCap, capabilities: defaultCapabilities,
		handshake: handshakeNewest, maxInput: defaultMaxInput}
	fs := c.flagSet("crawlcheck")
	fs.Usage = func() {}
	version := fs.Bool("version", false, "print the version and exit (as crawlcheck version)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		c.usage(c.stdout)
		return exitOK
	} else if err != nil {
		c.usage(c.stderr)
		return exitError
	}
	if err := noEmptyValue(fs); err != nil {
		say(stderr, "crawlcheck: %s\n", err)
		return exitError
	}
	if *version {
		printVersion(c)
		return exitOK
	}
	if fs.NArg() == 0 {
		c.usage(c.stderr)
		return exitError
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	if name == "help" {
		if len(rest) == 0 {
			c.usage(c.stdout)
			return exitOK
		}
		// help CMD is CMD --help.
		name, rest = rest[0], []string{"--help"}
	}
	cmd, ok := commands[name]
	if !ok {
		say(stderr, "crawlcheck: unknown command %q\n", name)
		c.usage(c.stderr)
		return exitError
	}
	c.helping = name
	err := cmd.run(c, rest)
	var b *blockedError
	var u *usageError
	var x *exitCodeError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &x):
		return x.code
	case errors.Is(err, errHelpShown):
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
		say(stderr, "usage: crawlcheck %s\n(crawlcheck help %s for every flag)\n", cmd.usage, name)
		return exitError
	default:
		say(stderr, "crawlcheck %s: %v\n", name, err)
		return exitError
	}
}

// usage lists the commands.
func (c *cli) usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: crawlcheck [--now RFC3339] [--timeout 10s] [--page-cap 100] [--max-input 16MiB] [--capabilities none] [--handshake newest] COMMAND ...\n")
	b.WriteString("       crawlcheck --version\n\n")
	for _, n := range order {
		b.WriteString("  crawlcheck " + commands[n].usage + "\n")
	}
	b.WriteString("\ncrawlcheck help COMMAND (or COMMAND --help) describes a command and its flags.\n")
	b.WriteString("Exit status: 0 proceed, 1 blocked or drift, 2 usage or error. See docs/cli.md.\n")
	io.WriteString(w, b.String())
}

// errHelpShown ends a command whose help was asked for: exit status 0.
var errHelpShown = errors.New("help shown")

// help prints a command's usage, what it does, every flag (the global ones
// too, which may be given after the command) and an example, on stdout.
func (c *cli) help(name string, fs *flag.FlagSet) {
	cmd := commands[name]
	say(c.stdout, "usage: crawlcheck %s\n\n%s\n\nflags:\n", cmd.usage, cmd.summary)
	fs.SetOutput(c.stdout)
	fs.PrintDefaults()
	fs.SetOutput(&lineEscaper{w: c.stderr})
	say(c.stdout, "\nexample:\n  %s\n", cmd.example)
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
	fs.StringVar(&c.capabilities, "capabilities", c.capabilities, "the client capabilities declared to a live server, comma-separated: roots, sampling, elicitation, or none; a server may offer other tools to another client, so declare what the agent's client declares")
	fs.StringVar(&c.handshake, "handshake", c.handshake, "the handshake spoken to a live server: newest (server/discover of protocol 2026-07-28 where the server answers it, else initialize) or initialize (protocol 2025-11-25, as the JS and Python SDK clients speak); speak what the agent's client speaks")
	fs.Var(&c.maxInput, "max-input", "the largest file, or server answer, read: `SIZE` in bytes, or with KiB or MiB (at most 64MiB)")
	return fs
}

// parse parses a command's flags and its positional arguments, in any
// order (flags may follow the arguments; after "--" everything is an
// argument); want is how many arguments it takes (-1: any). --help and -h
// print the command's help.
func (c *cli) parse(fs *flag.FlagSet, args []string, want int) ([]string, error) {
	fs.Usage = func() {}
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			c.help(c.helping, fs)
			return nil, errHelpShown
		}
		if err != nil {
			return nil, &usageError{msg: err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	if c.timeout <= 0 {
		return nil, &usageError{msg: "--timeout must be positive"}
	}
	if err := noEmptyValue(fs); err != nil {
		return nil, err
	}
	if c.pageCap <= 0 {
		return nil, &usageError{msg: "--page-cap must be positive"}
	}
	if c.pageCap > maxPageCap {
		return nil, &usageError{msg: fmt.Sprintf("--page-cap %d: at most %d (the pages one check can carry)", c.pageCap, maxPageCap)}
	}
	inputs = readLimits{max: int64(c.maxInput), timeout: c.timeout}
	if _, err := clientCapabilities(c.capabilities); err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	if _, err := sessionOptions(c.handshake); err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	if want >= 0 && len(pos) != want {
		return nil, &usageError{msg: fmt.Sprintf("want %d argument(s), got %d", want, len(pos))}
	}
	return pos, nil
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

// clockFunc is the clock of a command that goes on (run, proxy): --now,
// the same for its whole life, or the clock read at each use.
func (c *cli) clockFunc() (func() time.Time, error) {
	if c.now == "" {
		return time.Now, nil
	}
	t, err := c.clock()
	if err != nil {
		return nil, err
	}
	return func() time.Time { return t }, nil
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
