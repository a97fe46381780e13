"""The bottom layer: where benchlib keeps things (settings), the errors every layer raises, and
lazy package attributes. It imports nothing of benchlib; every other layer may import it."""
