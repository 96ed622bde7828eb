"""The built-in rule library written in the DSL, shipped as package data (engine.rules)."""
