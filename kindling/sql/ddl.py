"""Parsing Flink SQL statements into plain objects: DDL fully, queries as text with their line.

Query bodies (SELECT, views, INSERT ... SELECT) are kept as text: :mod:`kindling.sql.translate`
rewrites them for Spark. Expressions in DDL (computed columns, watermarks) are kept as text too.
Every error names the statement, the line and the form kindling supports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from kindling.sql.errors import SqlError
from kindling.sql.statements import Statement
from kindling.sql.tokens import NUMBER, QUOTED, STRING, SYMBOL, WORD, Token, TokenCursor, significant, tokenize
from kindling.sql.types import FlinkType, parse_type

CREATE_TABLE_FORM = (
    "CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (col TYPE, col AS expr, col TYPE METADATA [FROM 'key'] [VIRTUAL], "
    "WATERMARK FOR col AS col - INTERVAL 'n' SECOND, PRIMARY KEY (col, ...) NOT ENFORCED) "
    "[PARTITIONED BY (col, ...)] WITH ('connector' = '...', ...) [LIKE other [(INCLUDING|EXCLUDING ALL|OPTIONS|...)]]"
)
_STATEMENT_FORMS = (
    "CREATE [TEMPORARY] TABLE | CREATE [TEMPORARY] VIEW | CREATE TEMPORARY FUNCTION | DROP TABLE|VIEW|FUNCTION [IF EXISTS] | "
    "SET | RESET | INSERT INTO | EXECUTE STATEMENT SET BEGIN ... END | SELECT | WITH | VALUES | EXPLAIN | SHOW TABLES | DESCRIBE"
)
LIKE_FEATURES = ("ALL", "CONSTRAINTS", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS")


@dataclass
class ColumnDef:
    name: str
    type: Optional[FlinkType]  # None for computed columns (the expression decides)
    kind: str = "physical"  # physical | computed | metadata
    expression: Optional[str] = None  # computed: the expression text
    metadata_key: Optional[str] = None  # metadata: the key read (default: the column name)
    virtual: bool = False  # metadata: read-only (not written by sinks)
    comment: Optional[str] = None
    line: int = 1


@dataclass
class WatermarkDef:
    column: str
    expression: str
    line: int


@dataclass
class LikeDef:
    table: str
    options: list[tuple[str, str]] = field(default_factory=list)  # (INCLUDING|EXCLUDING|OVERWRITING, feature)
    line: int = 1


@dataclass
class CreateTable:
    name: str
    columns: list[ColumnDef]
    watermark: Optional[WatermarkDef] = None
    primary_key: list[str] = field(default_factory=list)
    partition_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    like: Optional[LikeDef] = None
    temporary: bool = False
    if_not_exists: bool = False
    comment: Optional[str] = None
    line: int = 1


@dataclass
class CreateView:
    name: str
    query: str
    query_line: int
    column_names: list[str] = field(default_factory=list)
    temporary: bool = False
    if_not_exists: bool = False
    line: int = 1


@dataclass
class CreateFunction:
    name: str
    target: str  # 'module.function'
    language: str = "PYTHON"
    temporary: bool = True
    if_not_exists: bool = False
    line: int = 1


@dataclass
class Drop:
    kind: str  # TABLE | VIEW | FUNCTION
    name: str
    if_exists: bool = False
    line: int = 1
    temporary: bool = False


@dataclass
class SetOption:
    key: Optional[str] = None  # None: list the options
    value: Optional[str] = None
    line: int = 1


@dataclass
class ResetOption:
    key: Optional[str] = None  # None: reset all
    line: int = 1


@dataclass
class Insert:
    table: str
    query: str
    query_line: int
    columns: list[str] = field(default_factory=list)
    overwrite: bool = False
    line: int = 1


@dataclass
class StatementSet:
    inserts: list[Insert]
    line: int = 1


@dataclass
class BeginStatementSet:
    line: int = 1


@dataclass
class EndStatementSet:
    line: int = 1


@dataclass
class Query:
    text: str
    line: int = 1


@dataclass
class Explain:
    statement: Union["Query", "Insert", "StatementSet"]
    line: int = 1


@dataclass
class Show:
    what: str  # TABLES | VIEWS | FUNCTIONS
    line: int = 1
    user: bool = False  # SHOW USER FUNCTIONS: the user-defined functions only


@dataclass
class Describe:
    name: str
    line: int = 1


ParsedStatement = Union[
    CreateTable, CreateView, CreateFunction, Drop, SetOption, ResetOption, Insert, StatementSet, BeginStatementSet,
    EndStatementSet, Query, Explain, Show, Describe,
]


class _Parser(TokenCursor):
    """Recursive descent over significant tokens; keeps the statement text to slice expressions from."""

    def __init__(self, statement: Statement) -> None:
        self.text = statement.text
        self.line = statement.line
        self.all_tokens = tokenize(statement.text, statement.line)
        super().__init__(significant(self.all_tokens))

    # --- token helpers ------------------------------------------------------------------------
    def at_word(self, *words: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token is not None and token.is_word(*words)

    def at_symbol(self, *symbols: str) -> bool:
        token = self.peek()
        return token is not None and token.is_symbol(*symbols)

    def take(self, what: str = "more input", construct: str = "statement", hint: Optional[str] = None) -> Token:
        token = self.peek()
        if token is None:
            last = self.tokens[-1] if self.tokens else None
            raise SqlError(f"{construct}: the statement ends where {what} was expected", line=last.line if last else self.line,
                           construct=construct, hint=hint)
        self.i += 1
        return token

    def expect_word(self, word: str, construct: str, hint: Optional[str] = None) -> Token:
        token = self.take(word, construct, hint)
        if not token.is_word(word):
            raise SqlError(f"{construct}: expected {word} but found '{token.text}'", line=token.line, construct=construct, hint=hint)
        return token

    def expect_symbol(self, symbol: str, construct: str, hint: Optional[str] = None) -> Token:
        token = self.take(f"'{symbol}'", construct, hint)
        if not token.is_symbol(symbol):
            raise SqlError(f"{construct}: expected '{symbol}' but found '{token.text}'", line=token.line, construct=construct, hint=hint)
        return token

    def accept_words(self, *words: str) -> bool:
        """Consume the word sequence if it comes next."""
        for k, word in enumerate(words):
            if not self.at_word(word, offset=k):
                return False
        self.i += len(words)
        return True

    def identifier(self, construct: str, hint: Optional[str] = None) -> str:
        token = self.take("a name", construct, hint)
        if token.kind not in (WORD, QUOTED):
            raise SqlError(f"{construct}: expected a name but found '{token.text}'", line=token.line, construct=construct, hint=hint)
        return token.identifier

    def object_name(self, construct: str, hint: Optional[str] = None) -> str:
        """A table/view/function name; catalog.database.name is accepted and reduced to its last part."""
        parts = [self.identifier(construct, hint)]
        while self.at_symbol("."):
            self.i += 1
            parts.append(self.identifier(construct, hint))
        return parts[-1]

    def string(self, construct: str, hint: Optional[str] = None) -> str:
        token = self.take("a string literal", construct, hint)
        if token.kind != STRING:
            raise SqlError(f"{construct}: expected a quoted string but found '{token.text}'", line=token.line, construct=construct, hint=hint)
        return token.string_value

    def rest_text(self) -> tuple[str, int]:
        """The text from the current token to the end, with its line."""
        token = self.peek()
        if token is None:
            return "", self.line
        return self.text[token.start - 0:], token.line

    def slice_text(self, first: Token, last: Token) -> str:
        return self.text[first.start:last.end]

    def name_list(self, construct: str, hint: Optional[str] = None) -> list[str]:
        self.expect_symbol("(", construct, hint)
        names = [self.identifier(construct, hint)]
        while self.at_symbol(","):
            self.i += 1
            names.append(self.identifier(construct, hint))
        self.expect_symbol(")", construct, hint)
        return names

    def done(self, construct: str, hint: Optional[str] = None) -> None:
        token = self.peek()
        if token is not None:
            raise SqlError(f"{construct}: unexpected '{token.text}'", line=token.line, construct=construct, hint=hint)

    # --- statements ---------------------------------------------------------------------------
    def parse(self) -> ParsedStatement:
        token = self.peek()
        if token is None:
            raise SqlError("empty statement", line=self.line, construct="statement")
        word = token.upper if token.kind == WORD else token.text
        if word == "CREATE":
            return self.create()
        if word == "DROP":
            return self.drop()
        if word == "SET":
            return self.set_option()
        if word == "RESET":
            return self.reset_option()
        if word == "INSERT":
            return self.insert()
        if word == "EXECUTE":
            return self.execute()
        if word == "BEGIN":
            self.i += 1
            self.expect_word("STATEMENT", "BEGIN STATEMENT SET")
            self.expect_word("SET", "BEGIN STATEMENT SET")
            self.done("BEGIN STATEMENT SET")
            return BeginStatementSet(token.line)
        if word == "END":
            self.i += 1
            self.done("END")
            return EndStatementSet(token.line)
        if word in ("SELECT", "WITH", "VALUES", "(", "TABLE"):
            return Query(self.text, token.line)
        if word == "EXPLAIN":
            return self.explain()
        if word == "SHOW":
            return self.show()
        if word in ("DESCRIBE", "DESC"):
            self.i += 1
            name = self.object_name("DESCRIBE", "DESCRIBE table_name")
            self.done("DESCRIBE", "DESCRIBE table_name")
            return Describe(name, token.line)
        if word in ("USE", "ALTER", "LOAD", "UNLOAD", "ANALYZE", "TRUNCATE", "DELETE", "UPDATE", "CALL", "ADD", "REMOVE"):
            raise SqlError(f"'{token.text.upper()}' statements are not supported by kindling", line=token.line,
                           construct=token.text.upper(), hint=_STATEMENT_FORMS)
        raise SqlError(f"cannot parse a statement starting with '{token.text}'", line=token.line, construct="statement", hint=_STATEMENT_FORMS)

    def create(self) -> ParsedStatement:
        start = self.take()
        temporary = False
        if self.accept_words("OR", "REPLACE"):
            raise SqlError("CREATE OR REPLACE is not supported", line=start.line, construct="CREATE OR REPLACE",
                           hint="DROP TABLE IF EXISTS name; CREATE TABLE name ...")
        if self.accept_words("TEMPORARY"):
            temporary = True
        system = self.accept_words("SYSTEM")
        token = self.take("TABLE, VIEW or FUNCTION", "CREATE")
        if token.is_word("TABLE"):
            if system:
                raise SqlError("CREATE TEMPORARY SYSTEM TABLE is not valid", line=token.line, construct="CREATE TABLE", hint=CREATE_TABLE_FORM)
            return self.create_table(start, temporary)
        if token.is_word("VIEW"):
            return self.create_view(start, temporary)
        if token.is_word("FUNCTION"):
            return self.create_function(start, temporary or system)
        if token.is_word("CATALOG", "DATABASE"):
            raise SqlError(f"CREATE {token.upper} is not supported: kindling has one in-memory catalog", line=token.line,
                           construct=f"CREATE {token.upper}", hint="CREATE TABLE / CREATE VIEW in the default catalog")
        raise SqlError(f"CREATE {token.text}: expected TABLE, VIEW or FUNCTION", line=token.line, construct="CREATE",
                       hint=_STATEMENT_FORMS)

    def if_not_exists(self) -> bool:
        return self.accept_words("IF", "NOT", "EXISTS")

    def create_table(self, start: Token, temporary: bool) -> CreateTable:
        c = "CREATE TABLE"
        if_not_exists = self.if_not_exists()
        name = self.object_name(c, CREATE_TABLE_FORM)
        table = CreateTable(name, [], temporary=temporary, if_not_exists=if_not_exists, line=start.line)
        if self.at_symbol("("):
            self.table_elements(table)
        if self.at_word("COMMENT"):
            self.i += 1
            table.comment = self.string(c)
        if self.accept_words("PARTITIONED", "BY"):
            table.partition_keys = self.name_list("PARTITIONED BY", "PARTITIONED BY (col, ...)")
        if self.at_word("WITH"):
            self.i += 1
            table.options = self.options_list()
        if self.at_word("LIKE"):
            like_token = self.take()
            like = LikeDef(self.object_name("LIKE", "LIKE source_table [(INCLUDING ALL)]"), line=like_token.line)
            if self.at_symbol("("):
                self.i += 1
                while not self.at_symbol(")"):
                    strategy = self.take("INCLUDING, EXCLUDING or OVERWRITING", "LIKE")
                    feature = self.take("a LIKE feature", "LIKE")
                    if not strategy.is_word("INCLUDING", "EXCLUDING", "OVERWRITING") or feature.upper not in LIKE_FEATURES:
                        raise SqlError(f"LIKE: '{strategy.text} {feature.text}' is not a LIKE option", line=strategy.line, construct="LIKE",
                                       hint="LIKE t (INCLUDING|EXCLUDING|OVERWRITING " + "|".join(LIKE_FEATURES) + ", ...)")
                    like.options.append((strategy.upper, feature.upper))
                    if self.at_symbol(","):
                        self.i += 1
                self.expect_symbol(")", "LIKE")
            table.like = like
        self.done(c, CREATE_TABLE_FORM)
        if not table.columns and table.like is None:
            raise SqlError(f"table '{name}' has no columns", line=start.line, construct=c, hint=CREATE_TABLE_FORM)
        if not table.options and table.like is None:
            raise SqlError(f"table '{name}' has no WITH ('connector' = '...') clause", line=start.line, construct=c, hint=CREATE_TABLE_FORM)
        seen: set[str] = set()
        for column in table.columns:
            if column.name in seen:
                raise SqlError(f"table '{name}' declares column '{column.name}' twice", line=column.line, construct=c)
            seen.add(column.name)
        return table

    def table_elements(self, table: CreateTable) -> None:
        c = "CREATE TABLE"
        self.expect_symbol("(", c)
        while True:
            token = self.peek()
            if token is None:
                raise SqlError("the column list is not closed with ')'", line=table.line, construct=c, hint=CREATE_TABLE_FORM)
            if token.is_word("WATERMARK"):
                self.watermark(table)
            elif token.is_word("PRIMARY") or token.is_word("CONSTRAINT"):
                self.table_primary_key(table)
            else:
                table.columns.append(self.column(table))
            token = self.take("',' or ')'", c, CREATE_TABLE_FORM)
            if token.is_symbol(")"):
                return
            if not token.is_symbol(","):
                raise SqlError(f"expected ',' or ')' after a column but found '{token.text}'", line=token.line, construct=c, hint=CREATE_TABLE_FORM)

    def _element_end(self) -> int:
        """Index of the ',' or ')' that ends the current column list element (depth 0)."""
        depth = 0
        j = self.i
        while j < len(self.tokens):
            t = self.tokens[j]
            if t.kind == SYMBOL:
                if t.text in ("(", "[", "<"):
                    depth += 1
                elif t.text in (")", "]", ">"):
                    if depth == 0:
                        return j
                    depth -= 1
                elif t.text == "," and depth == 0:
                    return j
            j += 1
        return j

    def column(self, table: CreateTable) -> ColumnDef:
        name_token = self.peek()
        name = self.identifier("column definition", CREATE_TABLE_FORM)
        line = name_token.line
        if self.at_word("AS"):
            self.i += 1
            end = self._expression_end()
            if end == self.i:
                raise SqlError(f"computed column '{name}' has no expression", line=line, construct="computed column", hint="col AS expression")
            expression = self.slice_text(self.tokens[self.i], self.tokens[end - 1])
            self.i = end
            comment = self.comment()
            return ColumnDef(name, None, "computed", expression=expression, comment=comment, line=line)
        # The type runs until METADATA / PRIMARY / COMMENT or the end of the element.
        end = self._element_end()
        type_end = self.i
        while type_end < end and not self.tokens[type_end].is_word("METADATA", "PRIMARY", "COMMENT"):
            type_end += 1
        if type_end == self.i:
            raise SqlError(f"column '{name}' has no type", line=line, construct="column definition", hint="name TYPE, e.g. amount DECIMAL(10, 2)")
        column_type = parse_type(self.tokens[self.i:type_end], line)
        self.i = type_end
        column = ColumnDef(name, column_type, line=line)
        if self.at_word("METADATA"):
            self.i += 1
            column.kind = "metadata"
            if self.at_word("FROM"):
                self.i += 1
                column.metadata_key = self.string("metadata column", "col TYPE METADATA FROM 'key' [VIRTUAL]")
            if self.at_word("VIRTUAL"):
                self.i += 1
                column.virtual = True
        if self.at_word("PRIMARY"):
            self.i += 1
            self.expect_word("KEY", "PRIMARY KEY")
            self.not_enforced()
            if table.primary_key:
                raise SqlError("the table declares more than one primary key", line=line, construct="PRIMARY KEY")
            table.primary_key = [name]
        column.comment = self.comment()
        if self.i != end:
            token = self.tokens[self.i] if self.i < len(self.tokens) else None
            raise SqlError(f"unexpected '{token.text if token else ''}' in the definition of column '{name}'",
                           line=token.line if token else line, construct="column definition", hint=CREATE_TABLE_FORM)
        return column

    def _expression_end(self) -> int:
        """End of an expression inside the column list: a ',' or ')' at depth 0, or COMMENT."""
        depth = 0
        j = self.i
        while j < len(self.tokens):
            t = self.tokens[j]
            if t.kind == SYMBOL and t.text in ("(", "["):
                depth += 1
            elif t.kind == SYMBOL and t.text in (")", "]"):
                if depth == 0:
                    return j
                depth -= 1
            elif depth == 0 and (t.is_symbol(",") or t.is_word("COMMENT")):
                return j
            j += 1
        return j

    def comment(self) -> Optional[str]:
        if self.at_word("COMMENT"):
            self.i += 1
            return self.string("COMMENT")
        return None

    def not_enforced(self) -> None:
        token = self.peek()
        if not self.accept_words("NOT", "ENFORCED"):
            raise SqlError("a primary key must be declared NOT ENFORCED (Flink does not check keys)",
                           line=token.line if token else self.line, construct="PRIMARY KEY", hint="PRIMARY KEY (col, ...) NOT ENFORCED")

    def table_primary_key(self, table: CreateTable) -> None:
        token = self.peek()
        if self.at_word("CONSTRAINT"):
            self.i += 1
            self.identifier("CONSTRAINT")
        self.expect_word("PRIMARY", "PRIMARY KEY", "PRIMARY KEY (col, ...) NOT ENFORCED")
        self.expect_word("KEY", "PRIMARY KEY", "PRIMARY KEY (col, ...) NOT ENFORCED")
        keys = self.name_list("PRIMARY KEY", "PRIMARY KEY (col, ...) NOT ENFORCED")
        self.not_enforced()
        if table.primary_key:
            raise SqlError("the table declares more than one primary key", line=token.line, construct="PRIMARY KEY")
        table.primary_key = keys

    def watermark(self, table: CreateTable) -> None:
        form = "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND"
        token = self.take()
        if table.watermark is not None:
            raise SqlError("the table declares more than one watermark", line=token.line, construct="WATERMARK", hint=form)
        self.expect_word("FOR", "WATERMARK", form)
        column = self.identifier("WATERMARK", form)
        self.expect_word("AS", "WATERMARK", form)
        end = self._expression_end()
        if end == self.i:
            raise SqlError("the watermark has no expression", line=token.line, construct="WATERMARK", hint=form)
        expression = self.slice_text(self.tokens[self.i], self.tokens[end - 1])
        self.i = end
        table.watermark = WatermarkDef(column, expression, token.line)

    def options_list(self) -> dict[str, str]:
        form = "WITH ('key' = 'value', ...)"
        self.expect_symbol("(", "WITH", form)
        options: dict[str, str] = {}
        if self.at_symbol(")"):
            self.i += 1
            return options
        while True:
            key_token = self.peek()
            key = self.string("WITH option key", form)
            self.expect_symbol("=", "WITH", form)
            value_token = self.take("a value", "WITH", form)
            if value_token.kind == STRING:
                value = value_token.string_value
            elif value_token.kind in (NUMBER, WORD):
                value = value_token.text  # Flink requires quotes; a bare number or true/false is forgiven
            else:
                raise SqlError(f"WITH option '{key}': expected a quoted value but found '{value_token.text}'", line=value_token.line,
                               construct="WITH", hint=form)
            if key in options:
                raise SqlError(f"WITH option '{key}' is given twice", line=key_token.line, construct="WITH", hint=form)
            options[key] = value
            token = self.take("',' or ')'", "WITH", form)
            if token.is_symbol(")"):
                return options
            if not token.is_symbol(","):
                raise SqlError(f"WITH: expected ',' or ')' but found '{token.text}'", line=token.line, construct="WITH", hint=form)

    def create_view(self, start: Token, temporary: bool) -> CreateView:
        form = "CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(col, ...)] AS SELECT ..."
        if_not_exists = self.if_not_exists()
        name = self.object_name("CREATE VIEW", form)
        columns = self.name_list("CREATE VIEW", form) if self.at_symbol("(") else []
        if self.at_word("COMMENT"):
            self.i += 1
            self.string("COMMENT")
        self.expect_word("AS", "CREATE VIEW", form)
        query, line = self.rest_text()
        if not query.strip():
            raise SqlError(f"view '{name}' has no query", line=start.line, construct="CREATE VIEW", hint=form)
        return CreateView(name, query, line, columns, temporary, if_not_exists, start.line)

    def create_function(self, start: Token, temporary: bool) -> CreateFunction:
        form = "CREATE TEMPORARY FUNCTION name AS 'module.function' LANGUAGE PYTHON"
        if_not_exists = self.if_not_exists()
        name = self.object_name("CREATE FUNCTION", form)
        self.expect_word("AS", "CREATE FUNCTION", form)
        target = self.string("CREATE FUNCTION", form)
        language = "JAVA"
        if self.at_word("LANGUAGE"):
            self.i += 1
            language = self.take("a language", "CREATE FUNCTION", form).upper
        self.done("CREATE FUNCTION", form)
        if language != "PYTHON":
            raise SqlError(f"function '{name}' is in {language}; kindling runs Python functions only (there is no JVM classpath for UDF jars)",
                           line=start.line, construct="CREATE FUNCTION", hint=form)
        if "." not in target:
            raise SqlError(f"function '{name}': '{target}' does not name module.function", line=start.line, construct="CREATE FUNCTION", hint=form)
        return CreateFunction(name, target, language, temporary, if_not_exists, start.line)

    def drop(self) -> Drop:
        start = self.take()
        form = "DROP [TEMPORARY] TABLE|VIEW|FUNCTION [IF EXISTS] name"
        temporary = self.accept_words("TEMPORARY")
        self.accept_words("SYSTEM")
        kind = self.take("TABLE, VIEW or FUNCTION", "DROP", form)
        if not kind.is_word("TABLE", "VIEW", "FUNCTION"):
            raise SqlError(f"DROP {kind.text}: expected TABLE, VIEW or FUNCTION", line=kind.line, construct="DROP", hint=form)
        if_exists = self.accept_words("IF", "EXISTS")
        name = self.object_name("DROP", form)
        self.done("DROP", form)
        return Drop(kind.upper, name, if_exists, start.line, bool(temporary))

    def set_option(self) -> SetOption:
        start = self.take()
        form = "SET 'key' = 'value'"
        if self.peek() is None:
            return SetOption(line=start.line)
        key = self._option_word("SET", form)
        self.expect_symbol("=", "SET", form)
        value = self._option_word("SET", form)
        self.done("SET", form)
        return SetOption(key, value, start.line)

    def _option_word(self, construct: str, form: str) -> str:
        """A quoted key/value, or Flink's legacy unquoted form (execution.runtime-mode, 10 s)."""
        token = self.peek()
        if token is not None and token.kind == STRING:
            self.i += 1
            return token.string_value
        if token is None:
            raise SqlError(f"{construct}: a key or value is missing", line=self.line, construct=construct, hint=form)
        first = token
        last = token
        while self.peek() is not None and not self.at_symbol("="):
            last = self.take()
        return self.slice_text(first, last)

    def reset_option(self) -> ResetOption:
        start = self.take()
        if self.peek() is None:
            return ResetOption(line=start.line)
        key = self._option_word("RESET", "RESET 'key'")
        return ResetOption(key, start.line)

    def insert(self) -> Insert:
        start = self.take()
        form = "INSERT INTO table [(col, ...)] SELECT ..."
        overwrite = False
        if self.at_word("OVERWRITE"):
            overwrite = True
            self.i += 1
        else:
            self.expect_word("INTO", "INSERT", form)
        table = self.object_name("INSERT", form)
        if self.at_word("PARTITION"):
            raise SqlError("INSERT ... PARTITION (...) is not supported", line=self.peek().line, construct="INSERT", hint=form)
        columns: list[str] = []
        if self.at_symbol("(") and not (self.peek(1) is not None and self.peek(1).is_word("SELECT", "WITH", "VALUES")):
            columns = self.name_list("INSERT", form)
        query, line = self.rest_text()
        if not query.strip():
            raise SqlError(f"INSERT INTO {table} has no query", line=start.line, construct="INSERT", hint=form)
        return Insert(table, query, line, columns, overwrite, start.line)

    def execute(self) -> Union[StatementSet, Insert]:
        start = self.take()
        form = "EXECUTE STATEMENT SET BEGIN INSERT INTO ...; INSERT INTO ...; END"
        if self.at_word("INSERT"):
            return self.insert()
        self.expect_word("STATEMENT", "EXECUTE STATEMENT SET", form)
        self.expect_word("SET", "EXECUTE STATEMENT SET", form)
        self.expect_word("BEGIN", "EXECUTE STATEMENT SET", form)
        return StatementSet(self._set_body(start, form), start.line)

    def _set_body(self, start: Token, form: str) -> list[Insert]:
        from kindling.sql.statements import split_statements

        token = self.peek()
        if token is None:
            raise SqlError("the statement set is empty", line=start.line, construct="EXECUTE STATEMENT SET", hint=form)
        body = self.text[token.start:]
        inserts: list[Insert] = []
        ended = False
        for inner in split_statements(_with_line_offset(body, token.line)):
            if ended:
                raise SqlError("text after END of the statement set", line=inner.line, construct="EXECUTE STATEMENT SET", hint=form)
            words = significant(tokenize(inner.text))
            if len(words) == 1 and words[0].is_word("END"):
                ended = True
                continue
            shifted = Statement(inner.text, inner.line - 1 + 1)
            parsed = parse_statement(shifted)
            if not isinstance(parsed, Insert):
                raise SqlError("a statement set holds only INSERT statements", line=inner.line, construct="EXECUTE STATEMENT SET", hint=form)
            inserts.append(parsed)
        if not ended:
            raise SqlError("the statement set has no END", line=start.line, construct="EXECUTE STATEMENT SET", hint=form)
        if not inserts:
            raise SqlError("the statement set is empty", line=start.line, construct="EXECUTE STATEMENT SET", hint=form)
        return inserts

    def explain(self) -> Explain:
        start = self.take()
        form = "EXPLAIN [PLAN FOR] SELECT ... | INSERT INTO ... | EXECUTE STATEMENT SET ..."
        self.accept_words("PLAN", "FOR")
        # Flink's explain details (ESTIMATED_COST, CHANGELOG_MODE, JSON_EXECUTION_PLAN, PLAN_ADVICE) are accepted.
        while self.at_word("ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE") or self.at_symbol(","):
            self.i += 1
        token = self.peek()
        if token is None:
            raise SqlError("EXPLAIN has no statement", line=start.line, construct="EXPLAIN", hint=form)
        inner = parse_statement(Statement(self.text[token.start:], token.line))
        if not isinstance(inner, (Query, Insert, StatementSet)):
            raise SqlError("EXPLAIN takes a query, an INSERT or a statement set", line=token.line, construct="EXPLAIN", hint=form)
        return Explain(inner, start.line)

    def show(self) -> Show:
        start = self.take()
        form = "SHOW TABLES | SHOW VIEWS | SHOW [USER] FUNCTIONS"
        what = self.take("TABLES, VIEWS or FUNCTIONS", "SHOW", form)
        user = what.is_word("USER")
        if user:
            what = self.take("FUNCTIONS", "SHOW", form)
        if not what.is_word("TABLES", "VIEWS", "FUNCTIONS") or (user and not what.is_word("FUNCTIONS")):
            raise SqlError(f"SHOW {'USER ' if user else ''}{what.text} is not supported", line=what.line, construct="SHOW",
                           hint=form)
        self.done("SHOW", form)
        return Show(what.upper, start.line, user)


def _with_line_offset(text: str, line: int) -> str:
    """Prefix newlines so that a sub-text keeps the line numbers of the script it came from."""
    return "\n" * (line - 1) + text


def parse_statement(statement: Union[Statement, str]) -> ParsedStatement:
    """Parse one statement (without its ';')."""
    if isinstance(statement, str):
        statement = Statement(statement.strip().rstrip(";"), 1)
    return _Parser(statement).parse()
