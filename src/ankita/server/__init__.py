"""The doors over the network and stdio: the HTTP API, the review page and MCP."""
