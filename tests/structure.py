#!/usr/bin/env python3
"""structure.py SRCDIR -- the house rules for src/, as TAP.

  1. every src/*.c and src/www/*.js file is at most 800 lines;
  2. no function in src/*.c is over 80 lines (from the line after its
     opening brace to the line before its closing one);
  3. no two source files depend on each other in a loop: file A depends
     on file B when A calls a function defined (not static) in B.c, or
     includes B.h where B.c exists; a page script depends on the scripts
     it imports.
It reads the code, it does not compile it: a function is a line that
starts with '{' in column 0 after its head, as clang-format lays them out
here.  On failure each problem is printed as a '#' line naming the file
and line."""
import os
import re
import sys

MAXFILE, MAXFUNC = 800, 80


def strip(text):
    """Comments and string and character literals out, newlines kept."""
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def functions(lines):
    """Yields (name, first line, length, exported) for each function."""
    i = 0
    while i < len(lines):
        if not lines[i].startswith('{'):
            i += 1
            continue
        j, head = i - 1, ''
        while j >= 0 and lines[j].strip() and not lines[j].startswith(('}', '#')) \
                and not lines[j].rstrip().endswith((';', '*/')):
            head = lines[j] + ' ' + head
            j -= 1
        k = i + 1
        while k < len(lines) and not lines[k].startswith('}'):
            k += 1
        m = re.search(r'\b([A-Za-z_]\w*)\s*\(', head)
        if m and '=' not in head.split('(')[0]:
            yield m.group(1), j + 2, k - i - 1, not re.match(r'\s*static\b', head)
        i = k + 1


def circles(edges):
    """The strongly connected components with more than one file."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main(top):
    src = os.path.join(top, 'src')
    www = os.path.join(src, 'www')
    cfiles = sorted(f for f in os.listdir(src) if f.endswith('.c'))
    jsfiles = sorted(f for f in os.listdir(www) if f.endswith('.js')) if os.path.isdir(www) else []
    big, long_fn, defs, text = [], [], {}, {}
    for f in cfiles:
        raw = open(os.path.join(src, f), encoding='utf-8', errors='replace').read()
        if raw.count('\n') > MAXFILE:
            big.append(f'src/{f}: {raw.count(chr(10))} lines')
        text[f] = raw
        for name, line, length, exported in functions(strip(raw).split('\n')):
            if length > MAXFUNC:
                long_fn.append(f'src/{f}:{line}: {name}() is {length} lines')
            if exported:
                defs[name] = f
    for f in jsfiles:
        n = open(os.path.join(www, f), encoding='utf-8').read().count('\n')
        if n > MAXFILE:
            big.append(f'src/www/{f}: {n} lines')

    edges, why = {f: set() for f in cfiles}, {}
    modules = {f[:-2] for f in cfiles}
    for f in cfiles:
        body = strip(text[f])
        for name in set(re.findall(r'\b([A-Za-z_]\w*)\s*\(', body)):
            g = defs.get(name)
            if g and g != f:
                edges[f].add(g)
                why.setdefault((f, g), f'calls {name}()')
        for h in re.findall(r'^#include "(\w+)\.h"', text[f], flags=re.M):
            if h in modules and h + '.c' != f:
                edges[f].add(h + '.c')
                why.setdefault((f, h + '.c'), f'includes {h}.h')
    for f in jsfiles:
        key = 'www/' + f
        edges[key] = set()
        js = open(os.path.join(www, f), encoding='utf-8').read()
        for imp in re.findall(r'''(?:import|from)\s*['"]\./([\w.-]+\.js)['"]''', js):
            edges[key].add('www/' + imp)
            why[(key, 'www/' + imp)] = f'imports {imp}'
    for v in list(edges):
        edges[v] = {w for w in edges[v] if w in edges}
    loops = []
    for comp in circles(edges):
        pairs = [f'{a} {why[(a, b)]} of {b}' for a in comp for b in comp if (a, b) in why]
        loops.append(', '.join(comp) + ': ' + '; '.join(pairs))

    checks = [(f'every source file is at most {MAXFILE} lines', big),
              (f'no function is over {MAXFUNC} lines', long_fn),
              ('no two source files depend on each other in a loop', loops)]
    print(f'1..{len(checks) + 1}')
    print(f'{"ok" if len(defs) > 100 else "not ok"} 1 - the parser found '
          f'{len(defs)} exported functions in {len(cfiles)} files')
    for n, (what, bad) in enumerate(checks, 2):
        print(f'{"not ok" if bad else "ok"} {n} - {what}')
        for line in bad:
            print(f'# {line}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
