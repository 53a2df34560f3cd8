// CoCoNet.g4 - the grammar of the CoCoNet language ------------------------===//
//
// Rules only, no embedded actions: compiler/parse/AstBuilder.cpp turns the
// parse tree into the AST. docs/language.md is the reference for what the
// rules mean. Names of built-in operations (allreduce, matmul, sqrt, ...) are
// plain identifiers here; sema gives them their meaning, so a misspelt
// operation gets a located "unknown operation" diagnostic, not a parse error.
//
//===----------------------------------------------------------------------===//

grammar CoCoNet;

// ---------------------------------------------------------------- top level

file
    : topDecl* EOF
    ;

topDecl
    : importDecl
    | programDecl
    | scheduleDecl
    ;

// import adam_update;        import optim.adam;
importDecl
    : IMPORT qualifiedName SEMI
    ;

qualifiedName
    : IDENT (DOT IDENT)*
    ;

// ------------------------------------------------------------------ programs

programDecl
    : PROGRAM name=IDENT LPAREN programParams? RPAREN block
    ;

programParams
    : meshDecl (COMMA param)* COMMA?
    | param (COMMA param)* COMMA?
    ;

// mesh [pp: P, tp: T]
meshDecl
    : MESH LBRACK meshAxis (COMMA meshAxis)* RBRACK
    ;

meshAxis
    : name=IDENT COLON size=IDENT
    ;

param
    : name=IDENT COLON typeSpec
    ;

// f32            (a scalar)
// f16[N, 4*H] sliced(0, tp) replicated(dp)
// f32[N] sliced segmented(layers)    segments[T]   (a segment table)
// A layout after a scalar type parses, so sema can say scalars have none.
typeSpec
    : dtype=IDENT (LBRACK dimList RBRACK)? layoutTerm*
    ;

dimList
    : dimExpr (COMMA dimExpr)*
    ;

// A product of positive integer literals and size names: 4*H, B*S, 1024.
dimExpr
    : dimFactor (STAR dimFactor)*
    ;

dimFactor
    : INT
    | IDENT
    ;

layoutTerm
    : kind=LOCAL (LPAREN axisList RPAREN)?                        # localLayout
    | kind=REPLICATED (LPAREN axisList RPAREN)?                   # replicatedLayout
    | kind=SLICED (LPAREN sliceDim=INT (COMMA axisList)? RPAREN)? # slicedLayout
    | kind=SEGMENTED LPAREN table=IDENT RPAREN                    # segmentedLayout
    ;

axisList
    : IDENT (COMMA IDENT)*
    ;

block
    : LBRACE stmt* RBRACE
    ;

stmt
    : name=IDENT (COLON typeSpec)? ASSIGN expr SEMI # assignStmt
    | LPAREN names+=IDENT (COMMA names+=IDENT)+ RPAREN ASSIGN expr SEMI # tupleAssignStmt
    | RETURN expr (COMMA expr)* SEMI    # returnStmt
    | REQUIRE LPAREN cond=expr COMMA message=STRING RPAREN SEMI # requireStmt
    ;

// ------------------------------------------------------------- expressions
// ANTLR gives earlier alternatives higher precedence: unary minus binds
// tightest, then * /, then + -, then comparisons (all left-associative).

expr
    : op=(MINUS | PLUS) operand=expr                       # unaryExpr
    | lhs=expr op=(STAR | SLASH) rhs=expr                  # mulExpr
    | lhs=expr op=(PLUS | MINUS) rhs=expr                  # addExpr
    | lhs=expr op=(LT | LE | GT | GE | EQ | NE) rhs=expr   # compareExpr
    | primary                                              # primaryExpr
    ;

// Comparisons are non-associative in spirit: a < b < c parses, and sema
// rejects comparing a bool with a number.
primary
    : callee=IDENT LPAREN argList? RPAREN   # callPrimary
    | IDENT                                 # namePrimary
    | FLOAT                                 # floatPrimary
    | INT                                   # intPrimary
    | (TRUE | FALSE)                        # boolPrimary
    | LPAREN expr RPAREN                    # parenPrimary
    ;

argList
    : arg (COMMA arg)*
    ;

// Keyword arguments: sum(x, dim=1).
arg
    : (key=IDENT ASSIGN)? expr
    ;

// ----------------------------------------------------------------- schedules

scheduleDecl
    : SCHEDULE name=IDENT FOR program=IDENT LBRACE directive* RBRACE
    ;

directive
    : APPLY name=IDENT SEMI                                          # applyDirective
    | LPAREN results+=IDENT (COMMA results+=IDENT)* RPAREN ASSIGN
          transform=IDENT LPAREN nameList? RPAREN SEMI               # bindDirective
    | transform=IDENT LPAREN nameList? RPAREN (CHUNKS chunks=INT)? SEMI # transformDirective
    ;

// Stages, then (algorithm only) a file: algorithm(ag, "ndv2.alg"). The
// AST builder takes a file only last.
nameList
    : nameArg (COMMA nameArg)*
    ;

nameArg
    : IDENT
    | STRING
    ;

// ------------------------------------------------------------------- lexer

IMPORT     : 'import';
PROGRAM    : 'program';
SCHEDULE   : 'schedule';
FOR        : 'for';
APPLY      : 'apply';
CHUNKS     : 'chunks';
MESH       : 'mesh';
RETURN     : 'return';
REQUIRE    : 'require';
LOCAL      : 'local';
REPLICATED : 'replicated';
SLICED     : 'sliced';
SEGMENTED  : 'segmented';
TRUE       : 'true';
FALSE      : 'false';

LPAREN : '(';
RPAREN : ')';
LBRACK : '[';
RBRACK : ']';
LBRACE : '{';
RBRACE : '}';
COMMA  : ',';
SEMI   : ';';
COLON  : ':';
DOT    : '.';
ASSIGN : '=';
PLUS   : '+';
MINUS  : '-';
STAR   : '*';
SLASH  : '/';
LE     : '<=';
GE     : '>=';
EQ     : '==';
NE     : '!=';
LT     : '<';
GT     : '>';

FLOAT
    : DIGIT+ '.' DIGIT* EXPONENT?
    | '.' DIGIT+ EXPONENT?
    | DIGIT+ EXPONENT
    ;

INT
    : DIGIT+
    ;

IDENT
    : [a-zA-Z_] [a-zA-Z_0-9]*
    ;

// A file name or a requirement's message: no escapes, no line break.
STRING
    : '"' ~["\\\r\n]* '"'
    ;

fragment DIGIT    : [0-9];
fragment EXPONENT : [eE] [+-]? DIGIT+;

LINE_COMMENT  : '//' ~[\r\n]* -> skip;
BLOCK_COMMENT : '/*' .*? '*/' -> skip;
WS            : [ \t\r\n]+ -> skip;

// Anything else is one bad character; the parser reports it with its location.
BAD_CHAR : . ;
