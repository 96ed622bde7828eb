"""AST → IR: rules (rules), policies (policies), lifting to a scope (lift), join plans (joins), the facts and
their encoding (encoding: the input facts made in one pass) and whole programs (program). No backend knowledge
lives here."""
