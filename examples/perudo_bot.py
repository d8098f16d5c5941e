#!/usr/bin/env python3
"""An example perudo-ssh bot: plays one game through `ssh HOST play` (docs/BOT-API.md).

    python examples/perudo_bot.py -i ~/.ssh/mybot -p 2222 mybot@perudo.example.org
    python examples/perudo_bot.py --join 3 -i ~/.ssh/mybot mybot@perudo.example.org

Its key's account must be a bot account. It makes a table of --seats with built-in bots in
the other seats (or sits at table --join and waits for it to start), plays until the game is
over, prints who won and leaves. On its turn it makes the bid most likely to be true from its
own dice, or calls dudo when the last bid is unlikely. Standard library only.
"""

import argparse
import json
import subprocess
import sys
from math import comb


def at_least(k: int, n: int, p: float) -> float:
    """The chance that at least k of n unknown dice show a face, each with chance p."""
    return 1.0 if k <= 0 else sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def likely(bid: dict, game: dict) -> float:
    """How likely `bid` is true, from my dice and the dice set aside for all to see."""
    hand = game["seats"][game["me"]]["hidden"] or []
    known = hand + [face for seat in game["seats"] for face in seat["shown"]]
    wild = game["wild"] and bid["face"] != 1  # pacos count as any face
    mine = sum(face == bid["face"] or (wild and face == 1) for face in known)
    return at_least(bid["count"] - mine, game["dice_in_play"] - len(known), (2 if wild else 1) / 6)


def move(game: dict) -> dict:
    """The command for my turn: dudo on an unlikely bid, else the likeliest bid."""
    choices, bids = game["choices"], game["bids"]
    if bids and choices["dudo"] and likely(bids[-1]["bid"], game) < 0.35:
        return {"type": "MakeCall", "call": "dudo"}
    if not choices["bids"]:
        return {"type": "MakeCall", "call": "dudo"}
    best = max(choices["bids"], key=lambda bid: (likely(bid, game), -bid["count"]))
    return {"type": "MakeBid", **best}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seats", type=int, default=3, help="seats of the table made (2-6)")
    parser.add_argument("--join", type=int, help="sit at this table instead of making one")
    args, ssh_args = parser.parse_known_args()
    ssh = subprocess.Popen(
        ["ssh", "-T", *ssh_args, "play"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
    )  # fmt: skip
    assert ssh.stdin is not None and ssh.stdout is not None

    def send(command: dict) -> None:
        ssh.stdin.write(json.dumps(command) + "\n")
        ssh.stdin.flush()

    done, played = set(), False
    for line in ssh.stdout:
        event = json.loads(line)
        kind = event["type"]
        if kind == "Welcome":
            if args.join is not None:
                send({"type": "JoinTable", "table": args.join})
            else:
                send({"type": "CreateTable", "seats": args.seats, "bots": args.seats - 1})
        elif kind == "TableState" and event["game"] is not None:
            game = event["game"]
            played = True
            if event["status"] == "over":
                print(f"game over: {event['seats'][game['winner']]['name']} won", flush=True)
                send({"type": "LeaveTable"})
                break
            now = (game["round_index"], len(game["bids"]))
            me = event["seats"][event["me"]]["name"]  # the seat's name: waiting_for lists those
            if me in event["waiting_for"] and ("ready", now) not in done:
                done.add(("ready", now))  # the reveal seen: go on
                send({"type": "Ready", "round": game["round_index"]})
            elif game["phase"] == "bidding" and game["turn"] == game["me"] and now not in done:
                done.add(now)  # one move per turn, however many times the table is sent
                send(move(game))
        elif kind in ("Refused", "Error", "Goodbye"):
            print(json.dumps(event), file=sys.stderr, flush=True)
            if kind == "Goodbye":
                break
    ssh.stdin.close()
    ssh.wait()
    return 0 if played else 1


if __name__ == "__main__":
    sys.exit(main())
