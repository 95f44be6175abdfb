"""The direct layout's routing key and BCC header, as a producer that is not
rungs computes them (README, "The direct layout and producers in other
languages"). BENCHMARKS.md times it; `rungs trace --json` prints the same.

    python3 bench/testdata/bcc.py            # time 100,000 headers
    python3 bench/testdata/bcc.py 90 orders  # one message of 90 units
"""
import sys
import time

DIGITS = "0123456789abcdef"


def digits(units, levels, radix):
    out = []
    for _ in range(levels):
        out.append(units % radix)
        units //= radix
    if units:
        raise ValueError("delay exceeds the ladder's maximum")
    return out[::-1]  # most significant first


def routing_key(units, levels, radix, dest=""):
    key = ".".join(DIGITS[d] for d in digits(units, levels, radix))
    return key + "." + dest if dest else key


def bcc(units, levels, radix, dest=""):
    keys, src = [], "i"
    for i, d in enumerate(digits(units, levels, radix)):
        if d == 0:
            continue
        level = levels - 1 - i
        rung = "%02d" % level if radix == 2 else "%02d.%s" % (level, DIGITS[d])
        keys.append(src + ">" + rung)
        src = "%02d" % level
    return keys + [src + ">=" + dest]


def main():
    levels, radix = 7, 16  # the default ladder at a 1 s unit
    if len(sys.argv) > 1:
        units, dest = int(sys.argv[1]), (sys.argv[2] if len(sys.argv) > 2 else "")
        print(routing_key(units, levels, radix, dest), bcc(units, levels, radix, dest))
        return
    import random
    rng = random.Random(1)
    delays = [rng.randint(1, 3600) for _ in range(1024)]
    for what, f in (("routing key", lambda u: routing_key(u, levels, radix, "orders")),
                    ("routing key + BCC", lambda u: (routing_key(u, levels, radix, "orders"), bcc(u, levels, radix, "orders")))):
        n = 100_000
        t = time.perf_counter()
        for i in range(n):
            f(delays[i % len(delays)])
        print("%s: %.2f µs/msg" % (what, (time.perf_counter() - t) / n * 1e6))


if __name__ == "__main__":
    main()
