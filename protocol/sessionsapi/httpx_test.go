package sessionsapi

import (
	"net/url"
	"strings"
	"testing"
)

func TestPaginate(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	page := func(query string) string {
		q, _ := url.ParseQuery(query)
		p, err := parsePage(q, "desc")
		if err != nil {
			return "error: " + err.Error()
		}
		l, err := paginate(items, func(s string) string { return s }, p)
		if err != nil {
			return "error: " + err.Error()
		}
		s := strings.Join(l.Data, "")
		if l.HasMore {
			s += "+"
		}
		if l.FirstID != nil {
			s += " " + *l.FirstID + ".." + *l.LastID
		}
		return s
	}
	for query, want := range map[string]string{
		"":                           "edcba e..a",
		"limit=2":                    "ed+ e..d",
		"limit=2&after=d":            "cb+ c..b",
		"limit=2&after=b":            "a a..a",
		"limit=2&before=b":           "dc+ d..c",
		"limit=2&before=d":           "e e..e",
		"order=asc&limit=3":          "abc+ a..c",
		"order=asc&after=e":          "",
		"limit=0":                    "error: limit must be an integer from 1 to 1000, not \"0\"",
		"limit=1001":                 "error: limit must be an integer from 1 to 1000, not \"1001\"",
		"order=up":                   "error: order must be \"asc\" or \"desc\", not \"up\"",
		"after=zz":                   "error: cursor \"zz\" names no item of this list",
		"after=a&before=b":           "error: give after or before, not both",
		"order=asc&before=c":         "ab a..b",
		"order=asc&limit=1&before=c": "b+ b..b",
	} {
		if got := page(query); got != want {
			t.Errorf("%q: got %q, want %q", query, got, want)
		}
	}
}
