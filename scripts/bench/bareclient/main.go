// Command bareclient is the floor for the prompt benchmark: it sends the same
// two streaming chat-completion requests openheim sends in the two-step tool
// scenario and reads both streams to the end, doing nothing else.
package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
)

const first = `{"model":"fake-model","messages":[{"role":"user","content":"What is in this directory?"}],"stream":true,"stream_options":{"include_usage":true}}`

const second = `{"model":"fake-model","messages":[{"role":"user","content":"What is in this directory?"},` +
	`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}}]},` +
	`{"role":"tool","tool_call_id":"call_1","content":"a.txt\nb.txt"}],"stream":true,"stream_options":{"include_usage":true}}`

func main() {
	base := os.Args[1]
	for _, body := range []string{first, second} {
		resp, err := http.Post(base+"/chat/completions", "application/json", bytes.NewBufferString(body))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
