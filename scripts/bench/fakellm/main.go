// Command fakellm serves the two-step tool scenario (list_dir, then an
// answer) over and over for whole-process benchmarks, or with -script the
// replies of a JSON file (llmtest's format): it prints its base URL and
// serves until killed.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

func main() {
	runs := flag.Int("runs", 1000, "how many two-step turns to script")
	script := flag.String("script", "", "serve the replies in this JSON `FILE` instead")
	flag.Parse()
	s := llmtest.New()
	defer s.Close()
	if *script != "" {
		replies, err := llmtest.LoadScript(*script)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		s.Enqueue(replies...)
		*runs = 0
	}
	for range *runs {
		s.Enqueue(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`, Split: 3}},
				Usage: &llmtest.Usage{Prompt: 900, Completion: 12}},
			llmtest.Reply{Text: []string{"The directory ", "holds a few ", "files."}, Usage: &llmtest.Usage{Prompt: 950, Completion: 8}},
		)
	}
	fmt.Println(s.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
