package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the repository's root, relative to this package's directory
// (go test runs a package's tests in its directory).
const repoRoot = "../.."

// block is one fenced code block of a page.
type block struct {
	page string // the page's path from the repository root
	line int    // the line of the block's first content line, from 1
	lang string // the fence's info string's first word: sh, yaml, ...
	text []string
}

// pages lists README.md and every Markdown page of docs/, by path from the
// repository root.
func pages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out[1:])
	return out
}

var fenceRE = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})\\s*([^\\s`]*)")

// blocks returns the fenced code blocks of every page, in order.
func blocks(t *testing.T) []block {
	t.Helper()
	var out []block
	for _, page := range pages(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := parseBlocks(page, data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bs...)
	}
	return out
}

// parseBlocks splits a Markdown page into its fenced code blocks (CommonMark
// fences of backticks or tildes; a block closes at a fence of the same
// character at least as long, with nothing after it).
func parseBlocks(page string, data []byte) ([]block, error) {
	var out []block
	var cur *block
	var fence string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur == nil {
			if m := fenceRE.FindStringSubmatch(line); m != nil {
				fence = m[1]
				cur = &block{page: page, line: n + 1, lang: strings.ToLower(m[2])}
			}
			continue
		}
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
			out = append(out, *cur)
			cur = nil
			continue
		}
		cur.text = append(cur.text, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the code block is never closed", page, cur.line-1)
	}
	return out, nil
}

// command is one simple command of a shell block: its leading variable
// assignments and its words, quotes removed.
type command struct {
	page string
	line int
	env  []string // NAME=value words before the program
	args []string // args[0] is the program
}

func (c command) name() string { return fmt.Sprintf("%s:%d", c.page, c.line) }

func (c command) String() string {
	return strings.Join(append(append([]string{}, c.env...), c.args...), " ")
}

// heredoc is the body of a here-document of a shell block, with the file
// its command writes to (cat > FILE <<'DELIM'), if any.
type heredoc struct {
	page   string
	line   int // the body's first line
	target string
	delim  string
	body   string
}

// shellBlocks returns the commands and here-documents of the pages' sh,
// shell, bash and console blocks.
func shellBlocks(t *testing.T) ([]command, []heredoc) {
	t.Helper()
	var cmds []command
	var docs []heredoc
	for _, b := range blocks(t) {
		switch b.lang {
		case "sh", "shell", "bash", "console":
		default:
			continue
		}
		c, d := parseShell(b)
		cmds = append(cmds, c...)
		docs = append(docs, d...)
	}
	return cmds, docs
}

var assignmentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// parseShell reads a shell block the way sh would split it into simple
// commands: lines continued by a backslash are joined, `#` starts a
// comment, quotes are removed, `;`, `&`, `|`, `&&` and `||` separate
// commands, redirections are dropped, and here-documents are collected
// rather than read as commands. It knows no expansions: the docs' examples
// need none.
func parseShell(b block) ([]command, []heredoc) {
	var cmds []command
	var docs []heredoc
	for i := 0; i < len(b.text); {
		line := b.line + i
		logical := b.text[i]
		i++
		for strings.HasSuffix(logical, `\`) && i < len(b.text) {
			logical = strings.TrimSuffix(logical, `\`) + " " + b.text[i]
			i++
		}
		words, pending := splitWords(logical)
		for _, w := range words {
			c := command{page: b.page, line: line}
			for len(w) > 0 && assignmentRE.MatchString(w[0]) {
				c.env = append(c.env, w[0])
				w = w[1:]
			}
			c.args = w
			if len(c.args) > 0 {
				cmds = append(cmds, c)
			}
		}
		for _, p := range pending {
			d := heredoc{page: b.page, line: b.line + i, target: p.target, delim: p.delim}
			var body []string
			for i < len(b.text) && strings.TrimSpace(b.text[i]) != p.delim {
				body = append(body, b.text[i])
				i++
			}
			i++ // the delimiter
			d.body = strings.Join(body, "\n") + "\n"
			docs = append(docs, d)
		}
	}
	return cmds, docs
}

type pendingHeredoc struct{ target, delim string }

// placeholderRE is a placeholder such as <name> or <cluster-queue>, which
// the shell would read as a redirection but the docs mean as a word.
var placeholderRE = regexp.MustCompile(`^<[A-Za-z][A-Za-z0-9_.-]*>`)

// splitWords splits one logical line into simple commands of words.
func splitWords(s string) ([][]string, []pendingHeredoc) {
	var (
		cmds     [][]string
		cur      []string
		docs     []pendingHeredoc
		w        strings.Builder
		inWord   bool
		redirect string // ">", "<" or "<<": what the next word is
		target   string // the current command's output file
	)
	flushWord := func() {
		if !inWord {
			return
		}
		text := w.String()
		w.Reset()
		inWord = false
		switch redirect {
		case ">":
			target = text
		case "<<":
			docs = append(docs, pendingHeredoc{target: target, delim: text})
		case "<":
		default:
			cur = append(cur, text)
		}
		redirect = ""
	}
	flushCommand := func() {
		flushWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur, target, redirect = nil, "", ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flushWord()
		case c == '#' && !inWord:
			flushCommand()
			return cmds, docs
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			inWord = true
			i++
			w.WriteByte(s[i])
		case c == ';' || c == '|' || c == '&':
			if c == '&' && i > 0 && s[i-1] == '>' {
				continue // >&2
			}
			flushCommand()
			if i+1 < len(s) && s[i+1] == c {
				i++
			}
		case c == '>':
			if inWord && strings.Trim(w.String(), "0123456789") == "" {
				w.Reset() // the descriptor of 2>
				inWord = false
			}
			flushWord()
			redirect = ">"
			if i+1 < len(s) && s[i+1] == '>' {
				i++
			}
			if i+1 < len(s) && s[i+1] == '&' {
				i++
			}
		case c == '<':
			if m := placeholderRE.FindString(s[i:]); m != "" && !inWord {
				inWord = true
				w.WriteString(m)
				i += len(m) - 1
				continue
			}
			flushWord()
			redirect = "<"
			if i+1 < len(s) && s[i+1] == '<' {
				redirect = "<<"
				i++
				if i+1 < len(s) && s[i+1] == '-' {
					i++
				}
			}
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	flushCommand()
	return cmds, docs
}

// isPlaceholder reports whether a word stands for a value the reader
// supplies, such as <name>.
func isPlaceholder(word string) bool {
	m := placeholderRE.FindString(word)
	return m != "" && m == word
}
