"""The personality card: loading, saving and rendering it (JSON, Character Card V1/V2, PNG)."""
