// Command bodyload sends -n concurrent request bodies of -size bytes to a
// running `openheim serve` and reports the answers and the server's memory:
// resident set before, and its peak (VmHWM) after. It measures what
// over-size bodies cost the server (the answer should be a 413 read no
// further than the limit). Linux only for the memory figures (/proc).
//
//	bodyload -url http://127.0.0.1:PORT -token TOKEN -pid PID [-n 20] [-size 8388608] [-path /v1/sessions]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "", "the server, http://HOST:PORT")
	token := flag.String("token", os.Getenv("OPENHEIM_TOKEN"), "its token (default $OPENHEIM_TOKEN)")
	pid := flag.Int("pid", 0, "its pid, for the memory figures")
	n := flag.Int("n", 20, "concurrent requests")
	size := flag.Int("size", 8<<20, "bytes in each body")
	path := flag.String("path", "/v1/sessions", "the route to POST to")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "bodyload: -url is required")
		os.Exit(2)
	}
	// A JSON object the server must read to its end to find it complete.
	body := []byte(`{"title":"` + strings.Repeat("x", max(*size-13, 0)) + `"}`)
	before := mem(*pid, "VmRSS")
	start := time.Now()
	statuses := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range *n {
		wg.Go(func() {
			s := post(*url+*path, *token, body)
			mu.Lock()
			statuses[s]++
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var keys []string
	for k := range statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("%d x %d-byte bodies to POST %s in %v\n", *n, len(body), *path, elapsed.Round(time.Millisecond))
	for _, k := range keys {
		fmt.Printf("  %3d x %s\n", statuses[k], k)
	}
	if *pid != 0 {
		fmt.Printf("server RSS before %.1f MB, peak %.1f MB (VmHWM), now %.1f MB\n",
			before, mem(*pid, "VmHWM"), mem(*pid, "VmRSS"))
	}
}

// post sends one body and describes the answer: its status, with the
// start of the body for an error, or the transport error.
func post(url, token string, body []byte) string {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	if resp.StatusCode < 400 {
		return resp.Status
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

// mem is a /proc/PID/status figure in MB (0 when unknown).
func mem(pid int, field string) float64 {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}
