"""The LLM path: settings → client, and the prompts it sends."""
