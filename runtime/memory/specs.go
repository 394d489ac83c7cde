package memory

// The memory tools' specs are copied byte for byte from the openheim API
// specification (seed 000) so every provider sees the same contract;
// TestSpecsMatchSeed guards against drift.

const (
	rememberName        = "remember"
	rememberDescription = "Save a fact, preference, decision, or piece of context to long-term memory so it can be recalled in future sessions with `search_memory`. Use it when the user asks you to remember something, or states something clearly worth keeping. Write one self-contained note per call, in plain prose, including enough context to make sense on its own."
	rememberParams      = `{
        "type": "object",
        "properties": {
          "content": { "type": "string", "description": "The note to remember (max 4000 characters)" }
        },
        "required": ["content"]
      }`
)

const (
	searchMemoryName        = "search_memory"
	searchMemoryDescription = "Search notes previously saved with `remember`. Use it when the user refers to something from an earlier session, asks what you remember, or when a stored preference or decision would change your answer. Returns the most relevant notes with their id and date. Search is keyword-based by default, or semantic when an `embedding_provider` is configured — see configuration.md."
	searchMemoryParams      = `{
        "type": "object",
        "properties": {
          "query": { "type": "string", "description": "What to recall" },
          "top_k": { "type": "integer", "description": "Number of notes to return (default from config, max 20)", "minimum": 1, "maximum": 20 }
        },
        "required": ["query"]
      }`
)

const (
	editMemoryName        = "edit_memory"
	editMemoryDescription = "Replace the content of an existing note in long-term memory by its id (the `#N` shown by `search_memory` or returned by `remember`). Use it when a stored fact or preference has changed rather than `forget`-ing it and `remember`-ing a new one. Search first if you don't know the id."
	editMemoryParams      = `{
        "type": "object",
        "properties": {
          "id": { "type": "integer", "description": "Id of the memory to edit" },
          "content": { "type": "string", "description": "The note's new content (max 4000 characters)" }
        },
        "required": ["id", "content"]
      }`
)

const (
	forgetName        = "forget"
	forgetDescription = "Permanently delete a note from long-term memory by its id (the `#N` shown by `search_memory` or returned by `remember`). Use it when the user asks you to forget something or when a note is outdated and being replaced. Search first if you don't know the id."
	forgetParams      = `{
        "type": "object",
        "properties": {
          "id": { "type": "integer", "description": "Id of the memory to delete" }
        },
        "required": ["id"]
      }`
)
