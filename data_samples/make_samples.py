"""Regenerate the sample inbox in this folder (deterministic: same bytes on every run).

    .venv/bin/python data_samples/make_samples.py

Standard library plus python-chess (for legal PGN movetext). Every file has its own seeded
random generator, so changing one part leaves the other files byte-identical. The deliberately
bad rows are inserted at fixed places and listed in README.md.
"""

from __future__ import annotations

import csv
import io
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import chess
import chess.pgn

HERE = Path(__file__).resolve().parent


def write_csv(rel: str, header: list[str], rows: list[list[object]]) -> None:
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow(["" if v is None else v for v in row])
    path.write_text(buf.getvalue(), encoding="utf-8", newline="")


def write_text(rel: str, text: str) -> None:
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")


def iso(ts: datetime, zone: bool = True) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S") + ("Z" if zone else "")


# --------------------------------------------------------------------------------------------
# Players
# --------------------------------------------------------------------------------------------

# Platform users: (id, name, email_verified, display_name, strength). The first 15 are the core.
PLATFORM = [
    ("u-ayse", "Ayşe Kaya", True, "AyseK", 1750),
    ("u-mehmet", "Mehmet Demir", True, "mdemir", 1600),
    ("u-zeynep", "Zeynep Çelik", True, "ZeynepC", 1900),
    ("u-emre", "Emre Şahin", False, "", 1450),
    ("u-elif", "Elif Yıldız", True, "", 1550),
    ("u-can", "Can Öztürk", True, "CanO", 1300),
    ("u-deniz", "Deniz Aydın", False, "denizA", 1680),
    ("u-burak", "Burak Arslan", True, "burak_a", 2050),
    ("u-selin", "Selin Doğan", True, "SelinD", 1500),
    ("u-kerem", "Kerem Koç", False, "", 1400),
    ("u-ece", "Ece Kurt", True, "ecekurt", 1820),
    ("u-mert", "Mert Özdemir", True, "MertO", 1250),
    ("u-nino", "Nino Beridze", True, "NinoB", 1950),
    ("u-rashad", "Rəşad Məmmədov", True, "Rashad", 1700),
    ("u-leyla", "Leyla Hüseynova", False, "", 1580),
    ("u-giorgi", "Giorgi Kapanadze", True, "GKap", 1620),
    ("u-ana", "Ana Gelashvili", False, "", 1480),
    ("u-levan", "Levan Tsiklauri", True, "", 1530),
    ("u-aysel", "Aysel Əliyeva", True, "Aysel", 1660),
    ("u-tural", "Tural Quliyev", False, "", 1390),
    ("u-ozan", "Ozan Erdoğan", True, "OzanE", 1710),
    ("u-irem", "İrem Aksoy", False, "", 1350),
    ("u-baris", "Barış Polat", True, "barisp", 1560),
    ("u-gul", "Gül Taş", False, "", 1440),
    ("u-hakan", "Hakan Yavuz", True, "", 1610),
    ("u-sinem", "Sinem Kılıç", True, "SinemK", 1490),
    ("u-tamar", "Tamar Lomidze", False, "", 1770),
    ("u-nika", "Nika Japaridze", True, "NikaJ", 1520),
    ("u-farid", "Fərid Nəsirov", False, "", 1640),
    ("u-gunel", "Günel Həsənova", True, "", 1470),
    ("u-oguz", "Oğuz Çetin", False, "", 1380),
    ("u-pinar", "Pınar Şimşek", True, "pinar", 1590),
    ("u-umut", "Umut Korkmaz", False, "", 1420),
    ("u-dilara", "Dilara Ünal", True, "DilaraU", 1730),
    ("u-sandro", "Sandro Chkheidze", False, "", 1650),
    ("u-eka", "Eka Maisuradze", True, "", 1510),
    ("u-kamran", "Kamran Rzayev", False, "", 1460),
    ("u-yusuf", "Yusuf Güneş", True, "yusufg", 1540),
    ("u-esra", "Esra Bulut", False, "", 1430),
    ("u-tolga", "Tolga Aktaş", True, "TolgaA", 1570),
]
CORE = [p[0] for p in PLATFORM[:15]]
STRENGTH = {p[0]: p[4] for p in PLATFORM}

BOTS = [
    ("bot-novice", "Novice Bot", "1100"),
    ("bot-expert", "Expert Bot", "1850"),
    ("bot-master", "Master Bot", ""),  # rating from the PGN Elo tag
]
BOT_STRENGTH = {"bot-novice": 1100, "bot-expert": 1850, "bot-master": 2000}

# Federation players: (id, name, federation, sex, birth_date, title).
FED = [
    ("34500001", "Yılmaz, Ayşe", "TUR", "w", "1994-03-12", "WIM"),
    ("34500002", "Şahin, Mustafa", "TUR", "m", "1988", "IM"),
    ("34500003", "Çakır, Gökhan", "TUR", "m", "1979-11-02", "FM"),
    ("34500004", "Öztürk, İbrahim", "TUR", "m", "2010-06-21", ""),  # junior
    ("34500005", "Doğan, Şule", "TUR", "w", "2009", "WFM"),  # junior
    ("34500006", "Güler, Ömer", "TUR", "m", "1965-01-30", ""),
    ("34500007", "Aksoy, Büşra", "TUR", "w", "2001-08-08", ""),
    ("34500008", "Erdoğan, Çağlar", "TUR", "m", "1992", "CM"),
    ("34500009", "Kılıç, Hüseyin", "TUR", "m", "1958-05-17", ""),
    ("34500010", "Ünal, Gülşen", "TUR", "w", "2011-02-14", ""),  # junior
    ("34500011", "Korkmaz, Tuğba", "TUR", "w", "1999", ""),
    ("34500012", "Aydın, Oğuzhan", "TUR", "m", "1985-09-09", "FM"),
    ("34500013", "Polat, Müge", "TUR", "w", "2012-12-01", ""),  # junior, newcomer
    ("34500014", "Kaya, Ertuğrul", "TUR", "m", "2003-04-04", ""),  # newcomer
    ("34500015", "Arslan, Gözde", "TUR", "w", "1997", ""),  # newcomer
    ("34500016", "Bulut, Süleyman", "TUR", "m", "1972-07-07", ""),  # newcomer, 0 in 1st event
    ("34500017", "Temiz, Çiğdem", "TUR", "w", "2010", ""),  # newcomer, junior
    ("34500018", '=HYPERLINK("http://x")', "TUR", "m", "1990-01-01", ""),
    ("34500019", "-Minus, Player", "TUR", "m", "1983", ""),
    ("34500020", "Karataş, İlkay", "TUR", "m", "1961-10-10", ""),  # 1401, about to drop
    ("34500021", "Özdemir, Şeyma", "TUR", "w", "2008-03-03", ""),
    ("34500022", "Yücel, Barış", "TUR", "m", "1995-06-06", "IM"),
    ("34500023", "Çetin, Ümit", "TUR", "m", "1976", ""),
    ("34500024", "Koç, Işıl", "TUR", "w", "2004-11-11", ""),
    ("13400001", "Məmmədov, Rauf", "AZE", "m", "1986-02-02", "GM"),  # 2410, peak 2460
    ("13400002", "Əliyeva, Günay", "AZE", "w", "1998", "WGM"),
    ("13400003", "Hüseynov, Elçin", "AZE", "m", "2009-09-19", "FM"),  # junior
    ("13400004", "Quliyev, Nicat", "AZE", "m", "1991-12-12", ""),
    ("13400005", "Rzayeva, Səbinə", "AZE", "w", "2002", ""),
    ("13400006", "Nəsirov, Vüqar", "AZE", "m", "1969-04-20", ""),
    ("13400007", "Həsənov, Tofiq", "AZE", "m", "2011", ""),  # junior, newcomer
    ("13400008", "Cəfərova, Aytən", "AZE", "w", "1993-05-05", ""),
    ("13600001", "Beridze, Nana", "GEO", "w", "1989-08-18", "WGM"),
    ("13600002", "Kapanadze, Davit", "GEO", "m", "1980", "IM"),
    ("13600003", "Gelashvili, Tamar", "GEO", "w", "2010-01-25", ""),  # junior
    ("13600004", "Lomidze, Levan", "GEO", "m", "1975-03-03", ""),
    ("13600005", "Tsiklauri, Mariam", "GEO", "w", "2000", ""),
    ("13600006", "Japaridze, Irakli", "GEO", "m", "1967-06-16", "FM"),
    ("13600007", "Chkheidze, Nino", "GEO", "w", "1996-10-01", ""),
    ("13600008", "Maisuradze, Giorgi", "GEO", "m", "2005", ""),
]
FED_IDS = [p[0] for p in FED]
NEWCOMERS = ["34500013", "34500014", "34500015", "34500016", "34500017", "13400007"]

# FIDE standard list @2025-12: id -> (rating, rated_games, peak). Newcomers are absent, and so
# are 13600008 and 34500024 (on UKD only).
FIDE_STD = {
    "13400001": (2410, 612, 2460),
    "13600001": (2315, 480, 2342),
    "34500022": (2362, 355, 2388),
    "34500002": (2288, 410, 2301),
    "13600002": (2254, 522, 2330),
    "34500012": (2203, 301, 2250),
    "13400002": (2180, 260, 2231),
    "34500003": (2126, 390, 2190),
    "13400003": (2212, 96, 2212),  # junior under 2300: K 40
    "13600006": (2077, 640, 2210),
    "34500001": (2045, 188, 2102),
    "34500008": (1988, 140, 2001),
    "13400004": (1942, 75, 1960),
    "34500006": (1897, 702, 2012),
    "13600004": (1851, 233, 1905),
    "34500004": (1802, 41, 1802),  # junior
    "34500011": (1764, 22, 1764),  # fewer than 30 games: K 40
    "13400008": (1736, 58, 1780),
    "34500005": (1711, 64, 1725),  # junior
    "34500018": (1690, 120, 1702),  # the =HYPERLINK name
    "34500019": (1655, 98, 1671),  # the -Minus name
    "13600005": (1620, 17, 1620),  # K 40
    "34500007": (1598, 54, 1633),
    "13600007": (1577, 26, 1577),  # K 40
    "34500009": (1540, 300, 1688),
    "13400006": (1512, 205, 1600),
    "34500021": (1489, 12, 1489),  # K 40
    "13600003": (1466, 33, 1466),  # junior
    "34500023": (1437, 150, 1502),
    "34500020": (1401, 240, 1555),  # drops below 1400 after one lost rated game
    "34500010": (1455, 9, 1455),  # junior, K 40
    "13400005": (1630, 88, 1650),
}
# Rapid / blitz: fewer players (a rapid game of a player only on the standard list uses that).
FIDE_RAPID = {
    "13400001": (2385, 140, 2440),
    "13600001": (2290, 90, 2300),
    "34500002": (2231, 77, 2260),
    "34500012": (2150, 60, 2180),
    "34500003": (2098, 45, 2120),
    "34500001": (2001, 39, 2040),
    "34500008": (1955, 28, 1960),
    "34500006": (1870, 210, 1950),
    "13600004": (1822, 19, 1830),
    "34500004": (1760, 12, 1760),
    "34500007": (1570, 33, 1590),
    "34500009": (1505, 80, 1600),
    "34500020": (1430, 55, 1480),
    "13400006": (1488, 31, 1500),
}
FIDE_BLITZ = {
    "13400001": (2401, 220, 2455),
    "34500022": (2330, 150, 2370),
    "34500002": (2262, 98, 2290),
    "13400002": (2150, 70, 2170),
    "34500003": (2080, 66, 2105),
    "34500001": (2012, 52, 2050),
    "13400004": (1901, 25, 1901),
    "34500005": (1688, 14, 1688),
    "34500018": (1650, 40, 1672),
    "34500019": (1610, 36, 1630),
    "34500021": (1455, 8, 1455),
    "34500023": (1410, 61, 1470),
}


def ukd_of(fide: dict[str, tuple[int, int, int]], shift: int, extra: dict[str, int]) -> dict:
    out = {pid: max(1000, min(2420, r - shift)) for pid, (r, _, _) in fide.items()}
    out.update(extra)
    return out


# UKD: Turkish players mostly; the k bands 30/25/20/15/10 are all present.
UKD_STD = ukd_of(
    {k: v for k, v in FIDE_STD.items() if k.startswith("345") or k in ("13400001", "13600002")},
    40,
    {"34500024": 1180, "34500010": 1240, "34500021": 1295, "13400001": 2420, "34500013": 1050},
)
UKD_RAPID = ukd_of(
    {k: v for k, v in FIDE_RAPID.items() if k.startswith("345")},
    30,
    {"34500024": 1120, "34500021": 1310},
)
UKD_BLITZ = ukd_of(
    {k: v for k, v in FIDE_BLITZ.items() if k.startswith("345")},
    25,
    {"34500024": 1150, "34500010": 1205, "13400001": 2405},
)

# Club-only players of ankara-sk; ank-06 is deliberately absent from players.csv.
CLUB_ONLY = [
    ("ank-01", "Tekin, Nurhan", "1999"),
    ("ank-02", "Sarı, Özgür", "1981-02-02"),
    ("ank-03", "Uçar, Şebnem", "2012"),
    ("ank-04", "Işık, Cengiz", "1955-12-24"),
    ("ank-05", "Ateş, Gönül", "1970"),
]
CLUB_MISSING = "ank-06"


def hidden_strength(pid: str) -> int:
    if pid in FIDE_STD:
        return FIDE_STD[pid][0]
    return {
        "34500013": 1600,
        "34500014": 1750,
        "34500015": 1700,
        "34500016": 1500,
        "34500017": 1650,
        "13400007": 1800,
        "13600008": 1900,
        "34500024": 1350,
        "ank-01": 1550,
        "ank-02": 1450,
        "ank-03": 1300,
        "ank-04": 1650,
        "ank-05": 1400,
        "ank-06": 1500,
    }.get(pid, 1500)


# One duplicate player: the Trabzon organiser registered 34500012 again, under a new national id
# without a FIDE id; federation/merges.csv merges the second id into the first.
DUPLICATE_ID, DUPLICATED_ID, DUPLICATE_EVENT = "34500912", "34500012", "trabzon-rr-2026-06"


def make_players() -> None:
    rows: list[list[object]] = []
    for pid, name, ev, disp, _ in PLATFORM:
        rows.append([pid, name, "", "", "", "", "", "false", "", "true" if ev else "false", disp])
    for pid, name, rating in BOTS:
        rows.append([pid, name, "", "", "", "", "", "true", rating, "false", ""])
    for pid, name, fed, sex, birth, title in FED:
        rows.append([pid, name, fed, sex, birth, title, pid, "false", "", "false", ""])
    for pid, name, birth in CLUB_ONLY:
        rows.append([pid, name, "TUR", "", birth, "", "", "false", "", "false", ""])
    rows.append(
        [DUPLICATE_ID, "Aydin, Oguzhan", "TUR", "m", "1985", "", "", "false", "", "false", ""]
    )
    write_csv(
        "players.csv",
        [
            "player_id",
            "name",
            "federation",
            "sex",
            "birth_date",
            "title",
            "fide_id",
            "is_bot",
            "bot_rating",
            "email_verified",
            "display_name",
        ],
        rows,
    )


# FIDE's per-list TXT download (standard_rating_list.txt, blitz_rating_list.txt): header label
# and width of each column; the rating column is headed by the month of the list (JAN26).
FIDE_TXT_COLUMNS = [
    ("ID Number", 15),
    ("Name", 61),
    ("Fed", 4),
    ("Sex", 4),
    ("Tit", 5),
    ("WTit", 5),
    ("OTit", 15),
    ("FOA", 4),
    ("JAN26", 6),
    ("Gms", 4),
    ("K", 3),
    ("B-day", 6),
    ("Flag", 0),
]
BLITZ_DECEMBER_GAMES = {"13400004": 9, "34500021": 6}
"""Blitz games the FIDE file says these players played in 2025-12 (its Gms column)."""
BAD_FIDE_LINE = ("34500O99", "Typo, Letter O In The Id", "TUR", "m", "1990", "")
"""A FIDE line whose ID has a letter O for a zero: quarantined, the lines around it still land."""


def fide_k(rating: int, games: int, peak: int, birth: str) -> int:
    """The K FIDE's January 2026 list shows: 10 once a rating reached 2400, 40 for a junior
    (until the end of the year of the 18th birthday, under 2300) or under 30 games, else 20."""
    if peak >= 2400:
        return 10
    if int(birth[:4]) + 18 >= 2026 and rating < 2300:
        return 40
    return 40 if games < 30 else 20


def fide_txt_line(values: list[str]) -> str:
    cells = [v.ljust(w) if w else v for v, (_, w) in zip(values, FIDE_TXT_COLUMNS, strict=True)]
    return "".join(cells).rstrip()


def make_fide_txt(rel: str, table: dict[str, tuple[int, int, int]]) -> None:
    """A starting list as FIDE publishes it: alphabetical, K instead of career count and peak."""
    people = {p[0]: p for p in FED}
    lines = []
    for pid, (rating, games, peak) in table.items():
        _, name, fed, sex, birth, title = people[pid]
        sex = "F" if sex == "w" else "M"
        women = title if title.startswith("W") else ""
        flag = "w" if sex == "F" else ""
        k = fide_k(rating, games, peak, birth)
        month = str(BLITZ_DECEMBER_GAMES.get(pid, 0))
        values = [pid, name, fed, sex, title, women, "", "", str(rating), month, str(k)]
        lines.append((name, fide_txt_line([*values, birth[:4], flag])))
    pid, name, fed, sex, birth, title = BAD_FIDE_LINE
    bad = [pid, name, fed, sex.upper(), title, "", "", "", "1700", "0", "20", birth, ""]
    lines.append((name, fide_txt_line(bad)))
    header = fide_txt_line([label for label, _ in FIDE_TXT_COLUMNS])
    body = [text for _, text in sorted(lines)]
    write_text(rel, "\n".join([header, *body]) + "\n")


def make_lists() -> None:
    for name, table in (("standard", FIDE_STD), ("rapid", FIDE_RAPID)):
        rows = [[pid, r, g, p] for pid, (r, g, p) in sorted(table.items())]
        write_csv(
            f"federation/lists/fide-{name}@2025-12.csv",
            ["player_id", "rating", "rated_games", "peak_rating"],
            rows,
        )
    # the blitz list comes as FIDE's own TXT download (read by rating_core.ingest.fide_lists)
    make_fide_txt("federation/lists/fide-blitz@2025-12.txt", FIDE_BLITZ)
    for name, table in (("standard", UKD_STD), ("rapid", UKD_RAPID), ("blitz", UKD_BLITZ)):
        rows = [[pid, r] for pid, r in sorted(table.items())]
        write_csv(f"federation/lists/ukd-{name}@2025-12.csv", ["player_id", "rating"], rows)


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


def play(rng: random.Random, a: int, b: int, draw: float = 0.25) -> str:
    """Result for white strength a vs black strength b."""
    e = 1 / (1 + 10 ** ((b - a) / 400))
    x = rng.random()
    if x < draw:
        return "1/2-1/2"
    return "1-0" if rng.random() < e else "0-1"


# --------------------------------------------------------------------------------------------
# Platform CSV
# --------------------------------------------------------------------------------------------

LIVE_TCS = [
    "60",
    "120+1",  # bullet
    "180",
    "300+3",
    "300",
    "180+2",  # blitz
    "600",
    "900+10",
    "600+5",  # rapid
    "1800",
    "40/5400+30:1800+30",
    "1800+20",  # classical
]
START = datetime(2026, 1, 1, tzinfo=UTC)
END = datetime(2026, 7, 1, tzinfo=UTC)
SPAN = int((END - START).total_seconds() // 60)


def make_platform_csv() -> None:
    rng = random.Random(2026_01)
    weights = [6 if p in CORE[:5] else 4 if p in CORE else 1 for p in STRENGTH]
    users = list(STRENGTH)

    def pair() -> tuple[str, str]:
        while True:
            a, b = rng.choices(users, weights)[0], rng.choices(users, weights)[0]
            if a != b:
                return a, b

    def ts() -> datetime:
        t = START + timedelta(minutes=rng.randrange(SPAN))
        return t.replace(second=0)

    games: list[dict] = []

    def add(**kw) -> dict:
        g = {
            "played_at": ts(),
            "zone": True,
            "rated": "true",
            "kind": "live",
            "days_per_move": "",
            "otb_confirmed": "",
            "termination": "normal",
            "bad": "",
        }
        g.update(kw)
        if "white_id" not in g:
            g["white_id"], g["black_id"] = pair()
        if "result" not in g:
            g["result"] = play(
                rng,
                STRENGTH.get(g["white_id"], BOT_STRENGTH.get(g["white_id"], 1500)),
                STRENGTH.get(g["black_id"], BOT_STRENGTH.get(g["black_id"], 1500)),
            )
        if "plies" not in g:
            g["plies"] = rng.randrange(24, 130)
        games.append(g)
        return g

    # Ordinary live games, every clock class.
    for _ in range(185):
        tc = rng.choice(LIVE_TCS)
        term = rng.choices(["normal", "resign", "timeout", "abandon"], [45, 35, 15, 5])[0]
        g = add(time_control=tc, termination=term, rated="false" if rng.random() < 0.1 else "true")
        if g["termination"] in ("timeout", "abandon") and g["result"] == "1/2-1/2":
            g["result"] = rng.choice(["1-0", "0-1"])
        if rng.random() < 0.05:
            g["zone"] = False  # no zone: read as UTC
    # Correspondence: days_per_move 1..7, time_control empty or '-', one 1/86400.
    for i in range(10):
        add(
            kind="correspondence",
            time_control="" if i % 2 else "-",
            days_per_move=str(1 + i % 7),
            termination=rng.choice(["normal", "resign", "timeout"]),
        )
    add(kind="correspondence", time_control="1/86400", termination="resign")
    # Unlimited, one expired (loss for the side to move, recorded as a normal result).
    for _ in range(6):
        add(kind="unlimited", time_control="-", termination=rng.choice(["normal", "resign"]))
    add(kind="unlimited", time_control="-", termination="expired", result="0-1", plies=37)
    # Over the board: confirmed, not confirmed, missing confirmation.
    for i in range(9):
        add(kind="otb", time_control="5400+30", otb_confirmed="false" if i in (3, 7) else "true")
    add(kind="otb", time_control="5400+30", otb_confirmed="")
    # Bots (any clock); bot-master only appears in the PGN (its rating comes from the Elo tag).
    for i in range(16):
        bot = "bot-novice" if i % 2 else "bot-expert"
        human = rng.choice(CORE)
        w, b = (human, bot) if i % 3 else (bot, human)
        add(
            white_id=w,
            black_id=b,
            time_control=rng.choice(LIVE_TCS),
            termination=rng.choice(["normal", "resign"]),
        )
    add(
        white_id="u-can",
        black_id="bot-novice",
        time_control="300+3",
        termination="timeout",
        result="0-1",
    )  # the human lost on time: fine
    # Aborts: fewer than 2 plies or termination abort (abandon / timeout before both moved too).
    add(time_control="180", termination="abort", plies=0, result="1/2-1/2")
    add(time_control="300+3", termination="abort", plies=1, result="0-1")
    add(time_control="600", termination="abandon", plies=1, result="1-0")
    add(time_control="120+1", termination="timeout", plies=0, result="0-1")
    # Bot did not move: annulled before move 10, a loss for the human from move 10 on.
    add(
        white_id="u-ayse",
        black_id="bot-expert",
        time_control="300",
        termination="bot_no_move",
        plies=10,
        result="1/2-1/2",
    )
    add(
        white_id="u-zeynep",
        black_id="bot-novice",
        time_control="600",
        termination="bot_no_move",
        plies=30,
        result="1-0",
    )  # recorded as a win: still a loss for u-zeynep

    # Deliberately bad rows.
    def bad(why: str, when: str, **kw) -> None:
        g = add(**kw)
        g["bad"] = why
        g["played_at"] = datetime.fromisoformat(when)

    bad("result 2-0", "2026-01-19T20:11:00+00:00", time_control="300+3", result="2-0")
    bad(
        "self-game",
        "2026-02-07T09:30:00+00:00",
        white_id="u-emre",
        black_id="u-emre",
        time_control="180",
    )
    bad("time control ? on a live game", "2026-03-02T18:45:00+00:00", time_control="?")
    bad(
        "1/1209600 is 14 days per move",
        "2026-03-21T07:00:00+00:00",
        kind="correspondence",
        time_control="1/1209600",
    )
    bad("duplicate game id", "2026-04-10T12:00:00+00:00", time_control="600")
    bad("impossible date", "2026-02-27T10:00:00+00:00", time_control="900+10")
    bad("rated is maybe", "2026-05-05T16:20:00+00:00", time_control="60", rated="maybe")
    bad(
        "bot lost on timeout",
        "2026-06-12T21:05:00+00:00",
        white_id="u-mert",
        black_id="bot-expert",
        time_control="180",
        termination="timeout",
        result="1-0",
    )

    games.sort(key=lambda g: (g["played_at"], g["white_id"]))
    rows: list[list[object]] = []
    prev_id = ""
    for n, g in enumerate(games, 1):
        gid = f"g26-{n:04d}"
        played = iso(g["played_at"], g["zone"])
        if g["bad"] == "duplicate game id":
            gid = prev_id
        if g["bad"] == "impossible date":
            played = "2026-02-30T10:00:00Z"
        prev_id = gid
        rows.append(
            [
                gid,
                played,
                g["white_id"],
                g["black_id"],
                g["result"],
                g["time_control"],
                g["rated"],
                g["kind"],
                g["plies"],
                g["termination"],
                g["days_per_move"],
                g["otb_confirmed"],
            ]
        )
    write_csv(
        "platform/games-2026.csv",
        [
            "game_id",
            "played_at",
            "white_id",
            "black_id",
            "result",
            "time_control",
            "rated",
            "kind",
            "plies",
            "termination",
            "days_per_move",
            "otb_confirmed",
        ],
        rows,
    )
    # Moderation: annul one rated, finished February game between two core users.
    target = next(
        r
        for r in rows
        if r[1].startswith("2026-02-1")
        and r[2] in CORE
        and r[3] in CORE
        and r[6] == "true"
        and r[7] == "live"
        and r[9] == "normal"
    )
    write_csv(
        "platform/moderation/decisions-2026-04.csv",
        ["game_id", "decided_at", "decision", "reason"],
        [[target[0], "2026-04-06T09:15:00Z", "annul", "engine assistance confirmed"]],
    )


# --------------------------------------------------------------------------------------------
# Lichess-style PGN
# --------------------------------------------------------------------------------------------

PGN_TCS = [
    ("Bullet", "60"),
    ("Bullet", "120+1"),
    ("Blitz", "180"),
    ("Blitz", "300+3"),
    ("Rapid", "600"),
    ("Rapid", "900+10"),
    ("Classical", "1800"),
]


def clock(seconds: float) -> float:
    return max(0.0, float(int(seconds)))


def make_pgn() -> None:
    rng = random.Random(2026_03)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    out: list[str] = []
    n_games = 30
    for i in range(n_games):
        speed, tc = rng.choice(PGN_TCS)
        casual = i % 7 == 3
        w, b = rng.sample(CORE, 2)
        welo, belo = STRENGTH[w] + rng.randrange(-60, 60), STRENGTH[b] + rng.randrange(-60, 60)
        titles: dict[str, str] = {}
        if i == 12:  # a bot known by the BOT title; bot-master has no bot_rating in players.csv
            b, belo = "bot-master", 2000
            speed, tc = "Blitz", "300+3"
            titles["BlackTitle"] = "BOT"
        day = 1 + (i * 30) // n_games
        t = datetime(2026, 3, day, 8, 0, tzinfo=UTC) + timedelta(minutes=rng.randrange(14 * 60))
        game = chess.pgn.Game()
        board = chess.Board()
        base = int(tc.split("+")[0])
        inc = int(tc.split("+")[1]) if "+" in tc else 0
        with_clock = i % 2 == 0
        left = [float(base), float(base)]
        node: chess.pgn.GameNode = game
        plies = rng.randrange(20, 90)
        for ply in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            mv = rng.choice(moves)
            board.push(mv)
            node = node.add_variation(mv)
            side = ply % 2
            left[side] = max(1.0, left[side] - rng.uniform(0.5, base / 45) + inc)
            if with_clock:
                node.set_clock(clock(left[side]))
        termination = "Normal"
        if board.is_checkmate():
            result = "0-1" if board.turn == chess.WHITE else "1-0"
        elif board.is_game_over():
            result = "1/2-1/2"
        else:
            result = play(rng, welo if b != "bot-master" else welo, belo)
            if result != "1/2-1/2" and rng.random() < 0.25:
                termination = "Time forfeit"
        if i == 21:
            result = "*"  # bad: an unfinished game in a rated export
        headers = {
            "Event": f"{'Casual' if casual else 'Rated'} {speed} game",
            "Site": "https://lichess.org/" + "".join(rng.choice(alphabet) for _ in range(8)),
            "Date": t.strftime("%Y.%m.%d"),
            "Round": "-",
            "White": w,
            "Black": b,
            "Result": result,
            "UTCDate": t.strftime("%Y.%m.%d"),
            "UTCTime": t.strftime("%H:%M:%S"),
            "WhiteElo": str(welo),
            "BlackElo": str(belo),
            **titles,
            "TimeControl": tc,
            "Termination": termination,
        }
        game.headers.clear()
        for k, v in headers.items():
            game.headers[k] = v
        exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
        out.append(game.accept(exporter) + "\n\n")
    # A truncated last game: the export stops inside the tag section.
    t = datetime(2026, 3, 31, 22, 41, tzinfo=UTC)
    out.append(
        '[Event "Rated Blitz game"]\n'
        '[Site "https://lichess.org/Zq8xT3pL"]\n'
        f'[Date "{t:%Y.%m.%d}"]\n'
        '[Round "-"]\n'
        '[White "u-ayse"]\n'
        '[Black "u-burak"]\n'
        f'[UTCDate "{t:%Y.%m.%d}"]\n'
        f'[UTCTime "{t:%H:%M:%S}"]\n'
    )
    write_text("platform/lichess-2026-03.pgn", "".join(out))


# --------------------------------------------------------------------------------------------
# Federation tournaments (CSV), club tournaments, TRF
# --------------------------------------------------------------------------------------------


def pair_up(order: list[str], met: set[frozenset]) -> list[tuple[str, str]]:
    """Pair neighbours in `order` without repeating a pairing (backtracking); repeats only if
    nothing else works."""

    def go(rest: list[str]) -> list[tuple[str, str]] | None:
        if not rest:
            return []
        a = rest[0]
        for q in rest[1:]:
            if frozenset((a, q)) in met:
                continue
            tail = go([x for x in rest[1:] if x != q])
            if tail is not None:
                return [(a, q), *tail]
        return None

    found = go(order)
    return (
        found if found is not None else [(order[i], order[i + 1]) for i in range(0, len(order), 2)]
    )


def swiss(rng: random.Random, players: list[str], rounds: int, rating, results=None):
    """Rounds of (white, black) pairings and (player, None) byes, with results from `results`."""
    score = {p: 0.0 for p in players}
    whites = {p: 0 for p in players}
    met: set[frozenset] = set()
    had_bye: set[str] = set()
    out = []
    for r in range(1, rounds + 1):
        order = sorted(players, key=lambda p: (-score[p], -rating(p), p))
        games = []
        if len(order) % 2:
            bye = next(p for p in reversed(order) if p not in had_bye)
            had_bye.add(bye)
            order.remove(bye)
            score[bye] += 1
            games.append((bye, None, "bye"))
        for a, b in pair_up(order, met):
            met.add(frozenset((a, b)))
            w, bl = (a, b) if whites[a] <= whites[b] else (b, a)
            whites[w] += 1
            res = results(r, w, bl) if results else play(rng, rating(w), rating(bl))
            if res in ("1-0", "+-"):
                score[w] += 1
            elif res in ("0-1", "-+"):
                score[bl] += 1
            else:
                score[w] += 0.5
                score[bl] += 0.5
            games.append((w, bl, res))
        out.append(games)
    return out


def round_robin(players: list[str]) -> list[list[tuple[str, str]]]:
    ps = players[:] + ([None] if len(players) % 2 else [])
    n = len(ps)
    rounds = []
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = ps[i], ps[n - 1 - i]
            if a is None or b is None:
                continue
            pairs.append((a, b) if (r + i) % 2 == 0 else (b, a))
        rounds.append(pairs)
        ps = [ps[0], ps[-1], *ps[1:-1]]
    return rounds


FED_HEADER = [
    "game_id",
    "tournament_id",
    "round",
    "played_on",
    "white_id",
    "black_id",
    "result",
    "rating_list",
]


def event_rows(tid: str, rating_list: str, dates: list[str], rounds) -> list[list[object]]:
    rows = []
    for r, games in enumerate(rounds, 1):
        for board, (w, b, res) in enumerate(games, 1):
            rows.append(
                [f"{tid}-r{r}-b{board}", tid, r, dates[r - 1], w, b or "", res, rating_list]
            )
    return rows


def make_federation() -> None:
    rng = random.Random(2026_06)

    def rating(p: str) -> int:
        return hidden_strength(p)

    def default(r: int, w: str, b: str) -> str:
        if "34500020" in (w, b):  # the 1401 player loses everything: drops below 1400
            return "0-1" if w == "34500020" else "1-0"
        return play(rng, rating(w), rating(b))

    events = []  # (file, tid, list, dates, players, format, results)

    # 2026-01: Swiss with 11 players (a bye each round); newcomers start here; 34500016 scores 0.
    def jan(r: int, w: str, b: str) -> str:
        if "34500016" in (w, b):
            return "0-1" if w == "34500016" else "1-0"
        return default(r, w, b)

    events.append(
        (
            "ankara-winter-2026-01",
            "standard",
            ["2026-01-10", "2026-01-11", "2026-01-12", "2026-01-13", "2026-01-14"],
            [
                "34500002",
                "34500003",
                "34500001",
                "34500008",
                "34500006",
                "34500020",
                "34500013",
                "34500014",
                "34500015",
                "34500016",
                "13400007",
            ],
            "swiss",
            jan,
        )
    )
    # 2026-02: round robin of 8 (newcomers reach 5 games vs rated) + rapid Swiss.
    events.append(
        (
            "izmir-open-2026-02",
            "standard",
            [f"2026-02-{d:02d}" for d in range(14, 21)],
            [
                "34500012",
                "34500004",
                "34500011",
                "34500014",
                "34500015",
                "34500016",
                "34500017",
                "13400004",
            ],
            "rr",
            default,
        )
    )
    events.append(
        (
            "baku-rapid-2026-02",
            "rapid",
            ["2026-02-22"] * 5,
            [
                "13400001",
                "13400002",
                "13400003",
                "13400004",
                "34500002",
                "34500003",
                "34500006",
                "13600004",
                "34500009",
                "13400006",
            ],
            "swiss",
            default,
        )
    )
    # 2026-03: standard Swiss (9 players: a bye each round) + blitz.
    events.append(
        (
            "tbilisi-cup-2026-03",
            "standard",
            ["2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10", "2026-03-11"],
            [
                "13600001",
                "13600002",
                "13600003",
                "13600004",
                "13600005",
                "13600006",
                "13600007",
                "13600008",
                "34500001",
            ],
            "swiss",
            default,
        )
    )
    events.append(
        (
            "bursa-blitz-2026-03",
            "blitz",
            ["2026-03-15"] * 7,
            [
                "34500022",
                "34500002",
                "34500003",
                "34500001",
                "34500005",
                "34500018",
                "34500019",
                "34500021",
                "34500023",
                "34500024",
            ],
            "swiss",
            default,
        )
    )
    # 2026-04: spans 2026-03-30 .. 2026-04-02 (period 2026-04) + rapid.
    events.append(
        (
            "istanbul-spring-2026-04",
            "standard",
            ["2026-03-30", "2026-03-31", "2026-03-31", "2026-04-01", "2026-04-02"],
            [
                "34500022",
                "13400001",
                "34500002",
                "13400003",
                "34500018",
                "34500019",
                "34500007",
                "34500010",
                "34500021",
                "34500013",
            ],
            "swiss",
            default,
        )
    )
    events.append(
        (
            "konya-rapid-2026-04",
            "rapid",
            ["2026-04-18"] * 5,
            [
                "34500001",
                "34500004",
                "34500005",
                "34500007",
                "34500010",
                "34500011",
                "34500020",
                "34500021",
                "34500024",
                "34500012",
            ],
            "swiss",
            default,
        )
    )
    # 2026-05: standard Swiss + blitz (the TRF is another May event).
    events.append(
        (
            "antalya-open-2026-05",
            "standard",
            ["2026-05-02", "2026-05-03", "2026-05-04", "2026-05-05", "2026-05-06"],
            [
                "13400001",
                "13600001",
                "34500022",
                "13400002",
                "13400005",
                "13400008",
                "34500004",
                "34500005",
                "13400007",
                "34500017",
            ],
            "swiss",
            default,
        )
    )
    events.append(
        (
            "samsun-blitz-2026-05",
            "blitz",
            ["2026-05-23"] * 5,
            [
                "34500022",
                "13400001",
                "13400002",
                "34500001",
                "13400004",
                "34500018",
                "34500019",
                "34500023",
            ],
            "swiss",
            default,
        )
    )
    # 2026-06: round robin of 8 + rapid.
    events.append(
        (
            "trabzon-rr-2026-06",
            "standard",
            [f"2026-06-{d:02d}" for d in range(6, 13)],
            [
                "34500002",
                "34500012",
                "34500003",
                "13400003",
                "34500004",
                "34500014",
                "34500015",
                "34500009",
            ],
            "rr",
            default,
        )
    )
    events.append(
        (
            "eskisehir-rapid-2026-06",
            "rapid",
            ["2026-06-27"] * 5,
            [
                "34500002",
                "34500003",
                "34500012",
                "34500004",
                "34500008",
                "13400001",
                "34500005",
                "34500010",
                "34500013",
                "13600004",
            ],
            "swiss",
            default,
        )
    )

    for tid, rl, dates, players, fmt, results in events:
        if fmt == "rr":
            rounds = [
                [(w, b, results(r, w, b)) for w, b in pairs]
                for r, pairs in enumerate(round_robin(players), 1)
            ]
        else:
            rounds = swiss(rng, players, len(dates), rating, results)
        rows = event_rows(tid, rl, dates, rounds)
        # Forfeits and deliberately bad rows, at fixed places.
        if tid == "izmir-open-2026-02":
            rows[9][6] = "+-"
        if tid == "antalya-open-2026-05":
            rows[17][6] = "-+"
        if tid == "bursa-blitz-2026-03":
            rows[12][6] = "1-1"  # bad: not a result
        if tid == "samsun-blitz-2026-05":
            rows[6][7] = "bullet"  # bad: not a rating list
        if tid == DUPLICATE_EVENT:  # the same games, the player under the duplicate id
            rows = [[DUPLICATE_ID if v == DUPLICATED_ID else v for v in row] for row in rows]
        write_csv(f"federation/{tid}.csv", FED_HEADER, rows)
    write_csv(
        "federation/merges.csv",
        ["keep_id", "merge_id", "decided_at", "reason"],
        [
            [
                DUPLICATED_ID,
                DUPLICATE_ID,
                "2026-06-20",
                "same person: registered again by the Trabzon organiser",
            ]
        ],
    )


def make_clubs() -> None:
    rng = random.Random(2026_02)
    pool = [
        "34500006",
        "34500009",
        "34500023",
        "34500011",
        "ank-01",
        "ank-02",
        "ank-03",
        "ank-04",
        "ank-05",
        "ank-06",
    ]
    club = [
        (
            "ankara-sk-championship-2026",
            "standard",
            pool[:8],
            [
                "2026-02-03",
                "2026-02-10",
                "2026-02-17",
                "2026-02-24",
                "2026-03-03",
                "2026-03-10",
                "2026-03-17",
            ],
        ),
        ("ankara-sk-blitz-2026-04", "blitz", pool[2:10], ["2026-04-11"] * 7),
        (
            "ankara-sk-spring-2026",
            "standard",
            [pool[i] for i in (0, 1, 4, 5, 7, 9)],
            ["2026-04-21", "2026-04-28", "2026-05-05", "2026-05-12", "2026-05-19"],
        ),
        # a one-day January event, so that the club's standard list starts with the first period
        ("ankara-sk-new-year-2026-01", "standard", pool[4:10], ["2026-01-10"] * 5),
    ]
    for tid, rl, players, dates in club:
        rounds = [
            [(w, b, play(rng, hidden_strength(w), hidden_strength(b))) for w, b in pairs]
            for pairs in round_robin(players)
        ]
        write_csv(f"clubs/ankara-sk/{tid}.csv", FED_HEADER, event_rows(tid, rl, dates, rounds))


TRF_PLAYERS = [
    "13400001",
    "34500022",
    "34500002",
    "34500012",
    "34500003",
    "34500001",
    "34500008",
    "34500011",
    "34500018",
    "34500021",
]


def make_trf() -> None:
    rng = random.Random(2026_05_16)
    info = {p[0]: p for p in FED}
    start = sorted(TRF_PLAYERS, key=lambda p: -FIDE_STD[p][0])  # start rank by rating
    rank = {p: i + 1 for i, p in enumerate(start)}
    slots: dict[str, list[tuple[int, str, str]]] = {p: [] for p in start}
    score = {p: 0.0 for p in start}
    met: set[frozenset] = set()
    whites = {p: 0 for p in start}
    value = {"1": 1.0, "=": 0.5, "0": 0.0, "+": 1.0, "-": 0.0, "H": 0.5, "U": 1.0}
    for r in range(1, 6):
        order = sorted(start, key=lambda p: (-score[p], rank[p]))
        if r == 3:  # a requested half-point bye, and the odd player out gets the pairing bye
            for p, code in (
                ("34500011", "H"),
                (order[-1] if order[-1] != "34500011" else order[-2], "U"),
            ):
                order.remove(p)
                slots[p].append((0, "-", code))
                score[p] += value[code]
        for a, b in pair_up(order, met):
            met.add(frozenset((a, b)))
            w, bl = (a, b) if whites[a] <= whites[b] else (b, a)
            whites[w] += 1
            if r == 4 and not any(s[2] in "+-" for ps in slots.values() for s in ps):
                rw, rb = "+", "-"  # black did not show up: forfeit
            else:
                res = play(rng, FIDE_STD[w][0], FIDE_STD[bl][0])
                rw, rb = {"1-0": ("1", "0"), "0-1": ("0", "1"), "1/2-1/2": ("=", "=")}[res]
            slots[w].append((rank[bl], "w", rw))
            slots[bl].append((rank[w], "b", rb))
            score[w] += value[rw]
            score[bl] += value[rb]
    place = {p: i + 1 for i, p in enumerate(sorted(start, key=lambda p: (-score[p], rank[p])))}
    lines = [
        "012 Ankara Open 2026",
        "022 Ankara",
        "032 TUR",
        "042 2026/05/16",
        "052 2026/05/20",
        "092 Individual: Swiss-System",
        "102 Kemal Arıkan (TUR)",
        "122 90 min + 30 s",
    ]
    for p in start:
        _, name, fed, sex, birth, title = info[p]
        bdate = birth.replace("-", "/") if len(birth) == 10 else ""
        line = (
            f"001 {rank[p]:>4} {sex:1}{title[:3]:>3} {name:<33} {FIDE_STD[p][0]:>4} {fed:>3}"
            f" {p:>11} {bdate:>10} {score[p]:>4.1f} {place[p]:>4}"
        )
        for opp, col, res in slots[p]:
            line += f"  {opp if opp else '0000':>4} {col} {res}"
        lines.append(line)
    write_text("federation/ankara-open-2026-05.trf", "\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------------
# Backgammon
# --------------------------------------------------------------------------------------------

BG_USERS = CORE[:12]


def make_backgammon() -> None:
    rng = random.Random(2026_07)
    matches: list[list[object]] = []
    for _ in range(140):
        t = START + timedelta(minutes=rng.randrange(SPAN))
        length = rng.choice([1, 3, 3, 5, 5, 5, 7, 9])
        ranked = "false" if rng.random() < 0.12 else "true"
        if rng.random() < 0.08:
            human = rng.choice(BG_USERS)
            w, lo = (human, "ai-novice") if rng.random() < 0.6 else ("ai-expert", human)
            matches.append([t, w, lo, length, ranked, "true"])
            continue
        a, b = rng.sample(BG_USERS, 2)
        e = 1 / (1 + 10 ** ((STRENGTH[b] - STRENGTH[a]) / 800))
        w, lo = (a, b) if rng.random() < e else (b, a)
        matches.append([t, w, lo, length, ranked, "false"])
    # Fair play: u-ayse and u-mehmet play 5 ranked matches within 24 hours.
    base = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
    for k, (h, w) in enumerate(
        [(0, "u-ayse"), (2, "u-mehmet"), (5, "u-ayse"), (9, "u-ayse"), (22, "u-mehmet")]
    ):
        lo = "u-mehmet" if w == "u-ayse" else "u-ayse"
        matches.append([base + timedelta(hours=h, minutes=5 * k), w, lo, 5, "true", "false"])
    # A newcomer with little experience (6 points: not on the leaderboard, provisional).
    matches.append(
        [datetime(2026, 6, 3, 18, 0, tzinfo=UTC), "u-giorgi", "u-selin", 3, "true", "false"]
    )
    matches.append(
        [datetime(2026, 6, 4, 18, 30, tzinfo=UTC), "u-selin", "u-giorgi", 3, "true", "false"]
    )
    # Deliberately bad rows.
    matches.append([datetime(2026, 2, 8, 19, 0, tzinfo=UTC), "u-elif", "u-can", 0, "true", "false"])
    matches.append(
        [datetime(2026, 4, 2, 21, 30, tzinfo=UTC), "u-deniz", "u-deniz", 5, "true", "false"]
    )
    matches.append(
        [
            datetime(2026, 4, 30, 20, 0, tzinfo=UTC),
            "u-burak",
            "u-selin",
            3,
            "true",
            "false",
            "bad-date",
        ]
    )
    matches.sort(key=lambda m: (m[0], m[1]))
    rows = []
    for n, m in enumerate(matches, 1):
        ended = "2026-04-31T20:00:00Z" if m[-1] == "bad-date" else iso(m[0])
        rows.append([f"bg26-{n:04d}", ended, m[1], m[2], m[3], m[4], m[5]])
    write_csv(
        "backgammon/matches-2026.csv",
        ["match_id", "ended_at", "winner_id", "loser_id", "length", "ranked", "vs_ai"],
        rows,
    )


def make_corrections() -> None:
    """The rating officer's corrections: one real one (34500007's round 2 game of
    istanbul-spring-2026-04 was a draw, entered 0-1: ΔR -0.69 becomes -0.19, K 20, so April's
    change is 20 x 0.44 = 8.8 -> +9 instead of 20 x -0.06 = -1.2 -> -1, 1598 -> 1607 instead of
    1597) and one the UKD lists cannot hold (a UKD K follows from the rating's band)."""
    write_csv(
        "federation/corrections.csv",
        ["list", "period", "player_id", "field", "value", "reason"],
        [
            [
                "fide-standard",
                "2026-04",
                "34500007",
                "rating",
                1607,
                "arbiter's report: round 2 against 34500010 was a draw, entered 0-1",
            ],
            ["ukd-standard", "2026-04", "34500007", "k", 20, "K as on the FIDE list"],
        ],
    )


def main() -> None:
    make_players()
    make_lists()
    make_platform_csv()
    make_pgn()
    make_federation()
    make_clubs()
    make_trf()
    make_backgammon()
    make_corrections()


if __name__ == "__main__":
    main()
