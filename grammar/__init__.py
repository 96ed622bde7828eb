"""The Lark grammar of the rule language, shipped as package data (engine.grammar)."""
