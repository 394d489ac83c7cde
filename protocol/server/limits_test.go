package server

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// bigJSON is a JSON object of more than n bytes.
func bigJSON(n int) string { return `{"title":"` + strings.Repeat("x", n) + `"}` }

// form is a multipart body: parts by name, each (filename, content).
func form(t *testing.T, parts ...[3]string) (body *bytes.Buffer, contentType string) {
	t.Helper()
	body = &bytes.Buffer{}
	w := multipart.NewWriter(body)
	for _, p := range parts {
		var pw io.Writer
		var err error
		if p[1] != "" {
			pw, err = w.CreateFormFile(p[0], p[1])
		} else {
			pw, err = w.CreateFormField(p[0])
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(pw, p[2])
	}
	w.Close()
	return body, w.FormDataContentType()
}

// bundle is a .tar.gz agent bundle padded with an incompressible file
// of pad bytes.
func bundle(t *testing.T, pad int) string {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	tw := tar.NewWriter(gz)
	for name, content := range map[string]string{"config.yaml": "name: big\n", "pad.bin": strings.Repeat("p", pad)} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content))})
		io.WriteString(tw, content)
	}
	tw.Close()
	gz.Close()
	return buf.String()
}

// TestBodiesOverTheirLimitAre413: every JSON body is cut at 1 MiB (REST,
// the sessions API's JSON routes, a multipart create's metadata part, a
// JSON-only route sent a multipart body), uploads at their own limits
// (32 MiB files, 8 MiB bundles), each with a 413 and a JSON error.
func TestBodiesOverTheirLimitAre413(t *testing.T) {
	f := start(t, setup{})
	_, id := f.open(t)
	conv := "/v1/sessions/conv_" + id
	over := bigJSON(1 << 20)
	meta, metaType := form(t, [3]string{"metadata", "", bigJSON(1 << 20)}, [3]string{"bundle", "a.tgz", bundle(t, 10)})
	file, fileType := form(t, [3]string{"file", "big.bin", strings.Repeat("f", 32<<20+1)})
	agent, agentType := form(t, [3]string{"bundle", "big.tgz", bundle(t, 8<<20)})
	create, createType := form(t, [3]string{"metadata", "", `{"title":"t"}`}, [3]string{"bundle", "big.tgz", bundle(t, 8<<20)})
	cases := []struct {
		name, method, path, contentType string
		body                            string
	}{
		{"REST rename", "PATCH", "/api/sessions/" + id, "application/json", over},
		{"create session", "POST", "/v1/sessions", "application/json", over},
		{"create session, no content type", "POST", "/v1/sessions", "", over},
		{"patch session", "PATCH", conv, "application/json", over},
		{"post event", "POST", conv + "/events", "application/json", `{"type":"message","data":{"role":"user","content":"` + strings.Repeat("m", 1<<20) + `"}}`},
		{"post event labelled multipart", "POST", conv + "/events", "multipart/form-data; boundary=x", over},
		{"fork", "POST", conv + "/fork", "application/json", over},
		{"patch conversation", "PATCH", "/v1/conversations/conv_" + id, "application/json", over},
		{"multipart create, metadata part", "POST", "/v1/sessions", metaType, meta.String()},
		{"file upload", "POST", conv + "/resources/files", fileType, file.String()},
		{"agent upload", "POST", "/api/agents", agentType, agent.String()},
		{"multipart create, bundle", "POST", "/v1/sessions", createType, create.String()},
	}
	for _, tc := range cases {
		code, body := f.do(t, tc.method, tc.path, tc.contentType, strings.NewReader(tc.body), f.authed(nil))
		if msg, ok := errorText(tc.path, body); code != 413 || !ok || !strings.Contains(msg, "over") {
			t.Errorf("%s (%d bytes): %d %.200s, want 413 {\"error\"}", tc.name, len(tc.body), code, body)
		}
	}
	// Under the limits, the same routes take their bodies.
	small, smallType := form(t, [3]string{"file", "small.bin", "hello"})
	if code, body := f.do(t, "POST", conv+"/resources/files", smallType, small, f.authed(nil)); code != 201 {
		t.Errorf("small upload: %d %s", code, body)
	}
	if code, body := f.do(t, "PATCH", conv, "application/json", strings.NewReader(bigJSON(1<<19)), f.authed(nil)); code != 200 {
		t.Errorf("a 512 KiB title: %d %.200s", code, body)
	}
}

// slowRequest sends a request's head and the first part of its body, then
// waits; it returns the status of the answer (0 if the connection closed
// without one) and how long the server held it.
func (f *fixture) slowRequest(t *testing.T, method, path, contentType, first string, length int) (int, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
		method, path, f.addr, f.token, contentType, length, first)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, time.Since(start)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// TestSlowJSONBodyIsCutAtTheReadTimeout: a JSON body that trickles in is
// cut at the read timeout on every route, including those that also take
// uploads; only a multipart upload gets the long upload window.
func TestSlowJSONBodyIsCutAtTheReadTimeout(t *testing.T) {
	const read, upload = 400 * time.Millisecond, 8 * time.Second
	f := start(t, setup{read: read, upload: upload})
	_, id := f.open(t)
	conv := "/v1/sessions/conv_" + id
	for _, tc := range []struct{ method, path string }{
		{"POST", "/v1/sessions"}, // also takes multipart creates
		{"PATCH", conv},
		{"POST", conv + "/events"},
		{"PATCH", "/api/sessions/" + id},
	} {
		code, held := f.slowRequest(t, tc.method, tc.path, "application/json", `{"title":`, 1000)
		if held > 3*time.Second || (code != 408 && code != 503 && code != 0) {
			t.Errorf("%s %s: %d after %v, want it cut at the %v read timeout", tc.method, tc.path, code, held, read)
		}
		t.Logf("%s %s: %d after %v", tc.method, tc.path, code, held.Round(time.Millisecond))
	}

	// An upload may take longer than the read timeout.
	body, ct := form(t, [3]string{"file", "slow.txt", "slow but whole"})
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	half := body.Len() / 2
	fmt.Fprintf(conn, "POST %s/resources/files HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		conv, f.addr, f.token, ct, body.Len())
	conn.Write(body.Bytes()[:half])
	time.Sleep(3 * read)
	conn.Write(body.Bytes()[half:])
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("slow upload: %v %v", resp, err)
	}
	resp.Body.Close()
}

// errorText is the message of an error answer in the shape of the API of
// path: seed 003's {"error": {"code", "message"}} on the sessions API,
// seed 000's {"error": "..."} elsewhere; ok is false for any other shape.
func errorText(path string, body []byte) (msg string, ok bool) {
	if strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/api/agents") {
		var e struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal(body, &e) != nil || e.Error.Code == "" {
			return "", false
		}
		return e.Error.Message, true
	}
	var e struct{ Error string }
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		return "", false
	}
	return e.Error, true
}
