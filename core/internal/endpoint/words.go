package endpoint

import (
	"errors"
	"strings"
)

// Words splits a command line into words as a POSIX shell does, without any
// expansion: blanks separate words; '…' keeps everything literally; "…"
// keeps everything but \" \\ \$ \` and \newline; a backslash outside quotes
// keeps the next character. It is the inverse of Stdio's quoting, so a stdio
// endpoint in a lockfile names the command it was made from. It lives here,
// beside Stdio, so that every host starting the server an endpoint names
// (the CLI's ci and --server) runs the same argv.
func Words(s string) ([]string, error) {
	var (
		words []string
		word  strings.Builder
		in    bool // a word has begun (possibly empty, as in '')
	)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				words = append(words, word.String())
				word.Reset()
				in = false
			}
		case ch == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated ' quote")
			}
			word.WriteString(s[i+1 : i+1+end])
			i += end + 1
			in = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				word.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`unterminated " quote`)
			}
			in = true
		case ch == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("a backslash ends the line")
			}
			i++
			if s[i] != '\n' {
				word.WriteByte(s[i])
				in = true
			}
		default:
			word.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, word.String())
	}
	return words, nil
}

// Split reads a written endpoint: an http(s) URL (url set, argv nil) or
// "stdio:" and a command line (argv its words, at least the program).
func Split(ep string) (url string, argv []string, err error) {
	if cmdline, ok := strings.CutPrefix(ep, "stdio:"); ok {
		argv, err := Words(cmdline)
		if err != nil {
			return "", nil, errors.New("is not a command line: " + err.Error())
		}
		if len(argv) == 0 {
			return "", nil, errors.New("names no command")
		}
		return "", argv, nil
	}
	if IsHTTP(ep) {
		return ep, nil, nil
	}
	return "", nil, errors.New("is neither stdio: and a command line nor an http(s) URL with a host")
}
