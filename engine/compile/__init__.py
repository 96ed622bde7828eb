"""AST → IR: rules (rules), policies (policies), lifting to policy scope (lift), the fact encoding
(encoding) and whole programs (program). No backend knowledge lives here."""
