package config

import (
	"strings"
	"testing"
)

func TestLimitsDefaultAndInherit(t *testing.T) {
	c := loadString(t, `
default_provider = "a"
[providers.a]
api_base = "http://localhost:1/v1"
default_model = "m"
[providers.b]
api_base = "http://localhost:2/v1"
default_model = "m"
max_answer_bytes = 1000
max_retry_wait_secs = 5
`)
	if c.MaxAnswerBytes != 4<<20 || c.MaxRetryWaitSecs != 60 {
		t.Errorf("top-level defaults = %d, %d", c.MaxAnswerBytes, c.MaxRetryWaitSecs)
	}
	if a := c.Providers["a"]; a.MaxAnswerBytes != 4<<20 || a.MaxRetryWaitSecs != 60 {
		t.Errorf("provider a inherits %d, %d", a.MaxAnswerBytes, a.MaxRetryWaitSecs)
	}
	if b := c.Providers["b"]; b.MaxAnswerBytes != 1000 || b.MaxRetryWaitSecs != 5 {
		t.Errorf("provider b's own = %d, %d", b.MaxAnswerBytes, b.MaxRetryWaitSecs)
	}

	c = loadString(t, `
max_answer_bytes = 65536
max_retry_wait_secs = 300
[providers.a]
api_base = "http://localhost:1/v1"
default_model = "m"
`)
	if a := c.Providers["a"]; a.MaxAnswerBytes != 65536 || a.MaxRetryWaitSecs != 300 {
		t.Errorf("provider a inherits the top level's %d, %d", a.MaxAnswerBytes, a.MaxRetryWaitSecs)
	}
}

func TestLimitsRefused(t *testing.T) {
	provider := "[providers.a]\napi_base = \"http://localhost:1/v1\"\ndefault_model = \"m\"\n"
	for body, want := range map[string]string{
		"max_answer_bytes = 0\n":                 "config: max_answer_bytes: must be at least 1 (got 0; default 4194304, 4 MiB)",
		"max_answer_bytes = -5\n":                "config: max_answer_bytes: must be at least 1 (got -5",
		"max_retry_wait_secs = 0\n":              "config: max_retry_wait_secs: must be at least 1 (got 0; default 60)",
		provider + "max_answer_bytes = 0\n":      "config: providers.a.max_answer_bytes: must be at least 1 (got 0; unset: the top-level max_answer_bytes)",
		provider + "max_retry_wait_secs = -1\n":  "config: providers.a.max_retry_wait_secs: must be at least 1 (got -1",
		"max_answer_bytes = \"4MiB\"\n":          "max_answer_bytes",
		provider + "max_retry_wait_secs = 1.5\n": "max_retry_wait_secs",
	} {
		_, err := LoadWith(writeConfig(t, body), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
}
