package redact

import (
	"slices"
	"testing"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "--api-key": true, "x-api-key": true, "client_secret": true, "sig": true,
		"PASSWORD": true, "Authorization": true, "AWS_SECRET_ACCESS_KEY": true, "apikey": true,
		"LOG_LEVEL": false, "DEBUG": false, "--verbose": false, "keyboard": false, "alt": false, "api-version": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLooksSecret(t *testing.T) {
	for v, want := range map[string]bool{
		"sk-proj-3Fa9b8C7d6E5f4":                   true,
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a": true,
		"3f9a8b7c6d5e4f3a2b1c":                     true,
		"correcthorsebatterystaplexx":              true, // 27 letters
		"claude-sonnet-4-5-20250929":               false,
		"gpt-4o-mini":                              false,
		"2024-06-01":                               false,
		"/home/me/src/project123abc456":            false,
		"@modelcontextprotocol/server-everything":  false,
		"production":                               false,
		"hunter2":                                  false,
		"two words1234567890abc here":              false,
	} {
		if got := LooksSecret(v); got != want {
			t.Errorf("LooksSecret(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestURLSecrets(t *testing.T) {
	got := URLSecrets("https://user:pa55word@h.example/v1?token=abc123&api-version=2024-06-01&alt=sse&k=zz9zz9zz9zz9zz9#access_token=frag-secret-1")
	basic := "dXNlcjpwYTU1d29yZA==" // base64("user:pa55word"), what net/http sends
	for _, want := range []string{"user:pa55word", "user", "pa55word", basic, "abc123", "zz9zz9zz9zz9zz9", "frag-secret-1"} {
		if !slices.Contains(got, want) {
			t.Errorf("URLSecrets lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"2024-06-01", "sse"} {
		if slices.Contains(got, not) {
			t.Errorf("URLSecrets holds the setting %q", not)
		}
	}
	if URLSecrets("not a url") != nil || URLSecrets("https://h/v1") != nil {
		t.Error("a URL without secrets gives none")
	}
}

func TestHeaderSecrets(t *testing.T) {
	if got := HeaderSecrets(" Bearer tok-abc "); !slices.Equal(got, []string{"Bearer tok-abc", "tok-abc"}) {
		t.Errorf("got %q", got)
	}
	if got := HeaderSecrets("rawtoken123"); !slices.Equal(got, []string{"rawtoken123"}) {
		t.Errorf("got %q", got)
	}
}

func TestArgSecrets(t *testing.T) {
	args := []string{"-y", "@scope/server", "/srv/data", "--token=flag-eq-secret", "--api-key", "next-arg-secret",
		"--model", "claude-sonnet-4-5", "API_KEY=kv-secret-value", "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		"https://u:url-pass-1@h/x?access_token=url-query-secret", "--verbose", "dGhpc2lzYXRva2VuMTIzNDU2Nzg5=="}
	got := ArgSecrets(args)
	for _, want := range []string{"flag-eq-secret", "next-arg-secret", "kv-secret-value", "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		"url-pass-1", "url-query-secret", "dGhpc2lzYXRva2VuMTIzNDU2Nzg5=="} {
		if !slices.Contains(got, want) {
			t.Errorf("ArgSecrets lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"-y", "@scope/server", "/srv/data", "claude-sonnet-4-5", "--verbose", "--model"} {
		if slices.Contains(got, not) {
			t.Errorf("ArgSecrets holds %q", not)
		}
	}
}

func TestEnvSecrets(t *testing.T) {
	got := EnvSecrets(map[string]string{"GITHUB_TOKEN": "short1", "LOG": "debug", "HOME": "/home/me",
		"KEY_FILE": "/home/me/.key", "OPAQUE": "zq8zq8zq8zq8zq8", "DB": "postgres://app:db-pass-9@db/x"})
	for _, want := range []string{"short1", "zq8zq8zq8zq8zq8", "db-pass-9"} {
		if !slices.Contains(got, want) {
			t.Errorf("EnvSecrets lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"debug", "/home/me", "/home/me/.key"} {
		if slices.Contains(got, not) {
			t.Errorf("EnvSecrets holds %q", not)
		}
	}
}
