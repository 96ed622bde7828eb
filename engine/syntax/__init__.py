"""The rule language: the Lark grammar driven into a typed AST (parse), the AST (ast), the formatter
(fmt, the parser's inverse) and the fact schema rules are written against (schema)."""
