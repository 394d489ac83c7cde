package tui

import (
	"strings"
)

// Code highlighting for fenced blocks whose language is known: keywords,
// strings, comments and numbers, line by line (a code line is written
// once it is complete, so the stream stays streaming a line at a time).
// A few lexical rules cover the languages answers are written in; an
// unknown language is shown as before, in the code colour.

// SGR sequences of highlighted tokens.
const (
	hlKeyword = "\x1b[35m" // magenta
	hlString  = "\x1b[32m" // green
	hlComment = "\x1b[2m"  // dim
	hlNumber  = "\x1b[36m" // cyan
)

// maxCodeLine bounds how much of a code line is held for highlighting:
// past it the rest of the line is written as it comes.
const maxCodeLine = 4096

// lexicon is how a family of languages spells comments, strings and
// keywords.
type lexicon struct {
	line       string // line comment: "//", "#", "--"
	blockOpen  string // "/*", "" for none
	blockClose string
	quotes     string // string delimiters
	keywords   map[string]bool
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	cLike = func(kw string) *lexicon {
		return &lexicon{line: "//", blockOpen: "/*", blockClose: "*/", quotes: "\"'`", keywords: words(kw)}
	}
	lexicons = map[string]*lexicon{
		"go": cLike(`break case chan const continue default defer else fallthrough for func go goto if import
			interface map package range return select struct switch type var nil true false iota`),
		"js": cLike(`async await break case catch class const continue debugger default delete do else export
			extends finally for from function if import in instanceof let new null of return static super switch
			this throw true false try typeof undefined var void while yield interface type enum implements`),
		"rust": cLike(`as async await break const continue crate dyn else enum extern false fn for if impl in let
			loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while`),
		"c": cLike(`auto break case char class const continue default do double else enum extern float for goto
			if int long new private protected public register return short signed sizeof static struct switch
			template this throw try typedef union unsigned using virtual void volatile while bool true false null
			nullptr import package final boolean`),
		"python": {line: "#", quotes: "\"'", keywords: words(`and as assert async await break class continue def del
			elif else except False finally for from global if import in is lambda None nonlocal not or pass raise
			return True try while with yield self`)},
		"sh": {line: "#", quotes: "\"'", keywords: words(`if then else elif fi for while until do done case esac in
			function return export local echo set unset`)},
		"sql": {line: "--", blockOpen: "/*", blockClose: "*/", quotes: "'\"", keywords: words(`select from where
			insert into values update set delete create table drop alter index join left right inner outer on
			group by order having limit and or not null as distinct primary key SELECT FROM WHERE INSERT INTO
			VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER INDEX JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER
			HAVING LIMIT AND OR NOT NULL AS DISTINCT PRIMARY KEY`)},
		"data": {line: "#", quotes: "\"'", keywords: words("true false null yes no")},
	}
	// aliases maps fence info strings to lexicons.
	aliases = map[string]string{
		"go": "go", "golang": "go", "js": "js", "javascript": "js", "ts": "js", "typescript": "js", "jsx": "js",
		"tsx": "js", "mjs": "js", "rust": "rust", "rs": "rust", "c": "c", "h": "c", "cpp": "c", "c++": "c",
		"java": "c", "cs": "c", "csharp": "c", "kotlin": "c", "swift": "c", "python": "python", "py": "python",
		"sh": "sh", "bash": "sh", "shell": "sh", "zsh": "sh", "console": "sh", "sql": "sql",
		"json": "data", "yaml": "data", "yml": "data", "toml": "data",
	}
)

// lexiconFor is the lexicon of a fence's info string ("go", "python
// title=x"), nil when the language is unknown.
func lexiconFor(info string) *lexicon {
	lang, _, _ := strings.Cut(strings.TrimSpace(info), " ")
	return lexicons[aliases[strings.ToLower(lang)]]
}

// span is a piece of a highlighted line: its text and SGR ("" plain).
type span struct {
	text, sgr string
}

// highlight splits one code line into spans; inBlock carries an open
// block comment from line to line.
func (lx *lexicon) highlight(line string, inBlock *bool) []span {
	var out []span
	add := func(text, sgr string) {
		if text == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].sgr == sgr {
			out[n-1].text += text
			return
		}
		out = append(out, span{text, sgr})
	}
	for i := 0; i < len(line); {
		rest := line[i:]
		switch {
		case *inBlock:
			end := strings.Index(rest, lx.blockClose)
			if end < 0 {
				add(rest, hlComment)
				return out
			}
			add(rest[:end+len(lx.blockClose)], hlComment)
			i += end + len(lx.blockClose)
			*inBlock = false
		case lx.blockOpen != "" && strings.HasPrefix(rest, lx.blockOpen):
			*inBlock = true
			add(lx.blockOpen, hlComment)
			i += len(lx.blockOpen)
		case lx.line != "" && strings.HasPrefix(rest, lx.line) && (lx.line != "#" || i == 0 || isSpaceTab(line[i-1])):
			add(rest, hlComment)
			return out
		case strings.IndexByte(lx.quotes, rest[0]) >= 0:
			n := stringLen(rest)
			add(rest[:n], hlString)
			i += n
		case isDigit(rest[0]) && (i == 0 || !isWordByte(line[i-1])):
			n := 1
			for n < len(rest) && (isWordByte(rest[n]) || rest[n] == '.') {
				n++
			}
			add(rest[:n], hlNumber)
			i += n
		case isWordByte(rest[0]):
			n := 1
			for n < len(rest) && isWordByte(rest[n]) {
				n++
			}
			if lx.keywords[rest[:n]] {
				add(rest[:n], hlKeyword)
			} else {
				add(rest[:n], "")
			}
			i += n
		default:
			add(rest[:1], "")
			i++
		}
	}
	return out
}

// stringLen is the length of the string literal s starts with, up to its
// closing quote (a backslash escapes), or to the end of the line.
func stringLen(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			return i + 1
		}
	}
	return len(s)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
