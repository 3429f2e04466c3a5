package providers

// Wire names the HTTP dialect a provider speaks.
type Wire string

// The wire formats of the vendor clients.
const (
	// WireResponses is the OpenAI Responses API (package providers/openai):
	// openai, openresponses, vercel, xai.
	WireResponses Wire = "responses"
	// WireAnthropic is the Anthropic Messages API (package providers/anthropic).
	WireAnthropic Wire = "anthropic"
	// WireChat is OpenAI-compatible chat completions (package
	// providers/chatcompat): openrouter, deepseek, gemini, minimax, merge,
	// ollama, llamacpp, and any provider this package does not know.
	WireChat Wire = "chat"
	// WireOffline is the embedded offline summarizer (package summary).
	WireOffline Wire = "offline"
)
