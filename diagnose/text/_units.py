"""Unit and currency vocabulary for :mod:`diagnose.text.values`.

General vocabulary only (unit words, currency symbols and codes), no topic words.
Physical units are resolved and converted by pint; this module only maps the
spellings pint does not know (CJK and French/Spanish/German unit words, "VAC",
"req/min") onto pint names, and keeps data sizes out of pint because pint treats
bits and bytes as dimensionless and decimal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from price_parser.parser import CURRENCY_CODES

# --- physical units -----------------------------------------------------------

SECONDS_PER_YEAR = 31557600.0
"""pint's year (365.25 days), in seconds: money per span of time is keyed per year."""

#: Unit words pint does not know, as pint expressions.  Calendar units follow
#: pint: 1 year == 12 months == 365.25 days, 1 week == 7 days.
ALIASES: dict[str, str] = {
    # Chinese / Japanese (matched right after a number, no space needed)
    "年": "year", "年间": "year", "年間": "year",
    "个月": "month", "個月": "month", "か月": "month", "ヶ月": "month", "カ月": "month",
    "ケ月": "month", "箇月": "month", "ヵ月": "month",
    "天": "day", "日": "day", "日間": "day", "日间": "day",
    "个工作日": "day", "個工作日": "day", "工作日": "day", "営業日": "day",  # working days count as days
    "周": "week", "週": "week", "週間": "week", "星期": "week", "个星期": "week", "個星期": "week",
    "礼拜": "week", "个礼拜": "week",
    "小时": "hour", "个小时": "hour", "小時": "hour", "個小時": "hour", "時間": "hour",
    "钟头": "hour", "个钟头": "hour",
    "分钟": "minute", "分鐘": "minute", "分": "minute", "秒": "second", "秒钟": "second",
    "米": "meter", "公尺": "meter", "メートル": "meter", "公里": "kilometer", "千米": "kilometer",
    "キロメートル": "kilometer", "厘米": "centimeter", "センチ": "centimeter", "毫米": "millimeter",
    "千克": "kilogram", "公斤": "kilogram", "キログラム": "kilogram", "克": "gram", "グラム": "gram",
    "毫克": "milligram", "吨": "metric_ton", "噸": "metric_ton", "トン": "metric_ton",
    "斤": "500 * gram", "升": "liter", "毫升": "milliliter", "リットル": "liter",
    "伏": "volt", "伏特": "volt", "瓦": "watt", "瓦特": "watt", "千瓦": "kilowatt",
    "赫兹": "hertz", "摄氏度": "degree_Celsius",
    "毫安时": "milliampere_hour", "毫安時": "milliampere_hour", "毫安": "milliampere",
    "瓦时": "watt_hour", "瓦時": "watt_hour", "千瓦时": "kilowatt_hour", "千瓦時": "kilowatt_hour",
    "兆赫": "megahertz", "吉赫": "gigahertz",
    "英寸": "inch", "インチ": "inch", "英尺": "foot", "英里": "mile", "磅": "pound",
    # French / Spanish / German / casual English time and mass words
    "jour": "day", "jours": "day", "semaine": "week", "semaines": "week", "mois": "month",
    "an": "year", "ans": "year", "année": "year", "années": "year", "heure": "hour",
    "heures": "hour", "seconde": "second", "secondes": "second",
    "día": "day", "días": "day", "dia": "day", "dias": "day", "semana": "week", "semanas": "week",
    "mes": "month", "meses": "month", "año": "year", "años": "year", "hora": "hour",
    "horas": "hour", "minuto": "minute", "minutos": "minute", "segundo": "second",
    "segundos": "second",
    "Tag": "day", "Tage": "day", "Tagen": "day", "Woche": "week", "Wochen": "week",
    "Monat": "month", "Monate": "month", "Monaten": "month", "Jahr": "year", "Jahre": "year",
    "Jahren": "year", "Stunde": "hour", "Stunden": "hour", "Minuten": "minute",
    "Sekunde": "second", "Sekunden": "second",
    "ton": "metric_ton", "tons": "metric_ton", "tonne": "metric_ton", "tonnes": "metric_ton",
    "mo": "month", "mos": "month", "wk": "week", "wks": "week", "kilo": "kilogram",
    "kilos": "kilogram",
    # request rates (the unit "request" is defined in the registry below)
    "requests": "request", "reqs": "request", "rps": "request / second",
    "qps": "request / second", "requests per second": "request / second",
    "requests per minute": "request / minute", "requests per hour": "request / hour",
    "requests per day": "request / day",
    # torque, whose unit joins two words (a single token would stop at "N" of "N·m": a force)
    "Nm": "newton * meter", "N·m": "newton * meter", "N.m": "newton * meter", "N-m": "newton * meter",
    "lb-ft": "pound_force * foot", "lb·ft": "pound_force * foot", "lbf·ft": "pound_force * foot",
    "lbf-ft": "pound_force * foot", "ft-lb": "pound_force * foot", "ft-lbs": "pound_force * foot",
    "ft·lbf": "pound_force * foot", "ft-lbf": "pound_force * foot",
    "newton metres": "newton * meter", "newton meters": "newton * meter", "newton-metres": "newton * meter",
    "newton-meters": "newton * meter", "pound-feet": "pound_force * foot", "pound feet": "pound_force * foot",
    "foot-pounds": "pound_force * foot", "foot pounds": "pound_force * foot",
    "VAC": "volt", "Vac": "volt", "VDC": "volt", "Vdc": "volt", "V AC": "volt", "V DC": "volt",
    "°C": "degree_Celsius", "°F": "degree_Fahrenheit", "° C": "degree_Celsius",
    "° F": "degree_Fahrenheit",
    "degrees Celsius": "degree_Celsius", "degree Celsius": "degree_Celsius", "degrees C": "degree_Celsius",
    "degrees Fahrenheit": "degree_Fahrenheit", "degree Fahrenheit": "degree_Fahrenheit",
    "degrees F": "degree_Fahrenheit", "degrés Celsius": "degree_Celsius", "degrés": "degree_Celsius",
    "Werktag": "day", "Werktage": "day", "Werktagen": "day", "Arbeitstag": "day", "Arbeitstage": "day",
    "Arbeitstagen": "day", "Kalendertag": "day", "Kalendertage": "day", "Kalendertagen": "day",
}
# A span of time with a word that says which days or hours count ("5 business days", "10
# working-days", "30 calendar days", "4 business hours") is measured in that unit, as "5个工作日"
# is: which ones count is the claim's wording, its length in them the value.
ALIASES |= {f"{which}{joint}{unit}": unit.rstrip("s")
            for which in ("business", "working", "calendar", "consecutive", "full", "clear", "banking")
            for unit in ("day", "days", "hour", "hours", "week", "weeks", "month", "months")
            for joint in (" ", "-")}


#: Metric unit words of the other supported languages (fr, es, pt, it, nl, de), as prefix + word in
#: lower case (a capitalised token is looked up lower-cased: "Kilogramm"); pint knows only the
#: English spellings, so "150 metros" read as a bare 150 and "3 kilogrammes" as 3.
_METRIC_WORDS = {
    "meter": ("meter", "mètre", "mètres", "metros", "metri"),  # not "metro": a railway in a question
    "gram": ("gramme", "grammes", "gramo", "gramos", "grama", "gramas", "grammo", "grammi", "gramm"),
    "liter": ("litro", "litros", "litri"),
}
_METRIC_PREFIXES = {
    "": ("",), "kilo": ("kilo", "kiló", "quiló", "quilô", "quilo", "chilo"),
    "centi": ("centi", "centí", "zenti"), "milli": ("milli", "milí", "mili"),
}
ALIASES |= {f"{written}{word}": f"{prefix}{base}"
            for base, words in _METRIC_WORDS.items() for word in words
            for prefix, spellings in _METRIC_PREFIXES.items() for written in spellings}
#: Time words of Italian, Portuguese and Dutch (French, Spanish and German are above).
ALIASES |= {word: unit for unit, words in {
    "day": ("giorno", "giorni", "dag", "dagen"),
    "week": ("settimana", "settimane", "weken"),
    "month": ("mese", "mesi", "mês", "maand", "maanden"),
    "year": ("anno", "anni", "ano", "anos", "jaar", "jaren"),
    "hour": ("uur", "uren"),  # not Italian "ora"/"ore": "now" and English "ore" in a question
    "minute": ("minuti", "minuut"),
    "second": ("secondi", "seconden"),
}.items() for word in words}
#: An area written in words ("1,200 sq ft", "3.5 square kilometres"): a single token would stop at
#: "sq" or "square".
ALIASES |= {f"{square}{length}": f"({unit}) ** 2"
            for unit, lengths in {
                "foot": ("ft", "feet", "foot"), "mile": ("mi", "miles", "mile"), "yard": ("yd", "yards"),
                "inch": ("inches",), "meter": ("m", "metres", "meters", "metre", "meter"),
                "kilometer": ("km", "kilometres", "kilometers", "kilometre", "kilometer"),
            }.items()
            for length in lengths for square in ("sq ", "sq. ", "sq.", "square ")}
_ADDRESS_WORDS = frozenset({"st", "rd"})
"""Abbreviations of an address or a name in any case ("12 St Mary Street", "4 Rd", "St. Paul"), never
the stokes or the rutherford that pint reads them as."""
#: English/French function words that pint would read as units ("in" inch,
#: "a" annum, "at" technical atmosphere, "are" 100 m², "points" typographic, "units" micro-nits,
#: "pts" pints, "shots" 1.5 fl oz, "zero-gravity" an acceleration, "Fr" franklins), and the address words.
#: ("an" stays a unit: French "un an" is a year.)
NOT_UNITS = frozenset(
    """a at as are in is it to of or on be by me my no so do go we us up and per the
    point points line lines hand hands gross bag bags stone stones pica count counts
    unit units pts shot shots gravity fr""".split()
) | _ADDRESS_WORDS
#: The one-letter units read after a number ("5 m", "3 g", "2 h", "12 V"); other
#: letters are too often something else ("5 a", "3 T").
ONE_LETTER_UNITS = frozenset("mgshVWAKLlJN")

#: Dimensionality → the unit keys and magnitudes are expressed in.
PREFERRED = {
    "[length]": "meter", "[mass]": "kilogram", "[time]": "second",
    "[temperature]": "degree_Celsius", "[current]": "ampere", "[luminosity]": "candela",
    "[length] ** 2": "meter ** 2", "[length] ** 3": "liter", "[length] / [time]": "meter / second",
    "[mass] * [length] ** 2 / [time] ** 3": "watt", "[mass] * [length] ** 2 / [time] ** 2": "joule",
    "[mass] * [length] ** 2 / [time] ** 3 / [current]": "volt",
    "[mass] * [length] ** 2 / [time] ** 3 / [current] ** 2": "ohm",
    "[mass] / [length] / [time] ** 2": "pascal", "1 / [time]": "hertz",
    "[current] * [time]": "ampere_hour", "[request]": "request", "[request] / [time]": "request / second",
    "[length] ** 3 / [time]": "liter / second",
}


@dataclass(frozen=True)
class Unit:
    """A resolved unit: magnitudes convert to ``label`` units by ``factor``
    (or through pint when ``offset`` is set, for temperatures)."""

    label: str
    dimension: str
    factor: float
    offset: str = ""  # pint unit name of an offset unit (°C, °F): convert per value

    def convert(self, value: float) -> float:
        if self.offset:
            return float(ureg().Quantity(value, self.offset).to("degree_Celsius").magnitude)
        return value * self.factor


def _compact(label: str) -> str:
    return label.replace(" ", "")  # "meter / second" → "meter/second"


@lru_cache(maxsize=1)
def ureg():
    """The one pint registry (built on first use: it takes ~0.2 s)."""
    import pint

    reg = pint.UnitRegistry()
    reg.define("request = [request] = req")
    return reg


# --- data sizes ---------------------------------------------------------------
# Bytes are binary, as engineers mean them (1.5 GB == 1536 MB); bits are decimal,
# as network rates are quoted (1 Gbps == 1000 Mbps).
_PREFIX = {"": 0, "K": 1, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_WORD_PREFIX = {"": "", "kilo": "K", "mega": "M", "giga": "G", "tera": "T", "peta": "P",
                "kibi": "K", "mebi": "M", "gibi": "G", "tebi": "T", "pebi": "P"}
_BYTES = re.compile(r"([KkMGTPE]?)i?B")
_CASUAL_BYTES = re.compile(r"([kmgtp])b")  # "gb", "mb" in casual writing
_BITS = re.compile(r"([KkMGTP]?)(?:b|bits?)")
_DATA_WORDS = re.compile(r"(kilo|mega|giga|tera|peta|kibi|mebi|gibi|tebi|pebi|)(bytes?|bits?)", re.I)


def _data_unit(token: str) -> Unit | None:
    rate = ps = False
    for suffix in ("/s", "/sec", " per second", "ps"):
        if token.endswith(suffix) and len(token) > len(suffix):
            token, rate, ps = token[: -len(suffix)], True, suffix == "ps"
            break
    size = None
    if m := _BYTES.fullmatch(token):
        size = 1024.0 ** _PREFIX[m[1]]
    elif (m := _CASUAL_BYTES.fullmatch(token)) and not ps:
        size = 1024.0 ** _PREFIX[m[1].upper()]
    elif (m := _BITS.fullmatch(token)) and (token != "b" or ps):
        size = 1000.0 ** _PREFIX[m[1]] / 8
    elif m := _DATA_WORDS.fullmatch(token):
        prefix = _PREFIX[_WORD_PREFIX[m[1].lower()]]
        size = 1024.0**prefix if m[2].lower().startswith("byte") else 1000.0**prefix / 8
    if size is None:
        return None
    if rate:
        return Unit("byte/second", "[information] / [time]", size)
    return Unit("byte", "[information]", size)


@lru_cache(maxsize=1)
def _preferred() -> dict:
    """:data:`PREFERRED` keyed by pint's dimensionality, whose text depends on the order of the
    units written ("pound_force * foot" is "[length] ** 2 * [mass] / [time] ** 2")."""
    reg = ureg()
    return {reg.parse_expression(label).dimensionality: (dim, label) for dim, label in PREFERRED.items()}


def _pint_unit(expr: str) -> Unit | None:
    reg = ureg()
    try:
        q = reg.parse_expression(expr)
    except Exception:  # pint raises many kinds of errors on non-units
        return None
    if not hasattr(q, "dimensionality") or q.dimensionless:
        return None
    dim = str(q.dimensionality)
    dim, label = _preferred().get(q.dimensionality, (dim, None))
    try:
        if dim == "[temperature]":
            return Unit("degree_Celsius", dim, 1.0, offset=str(q.units))
        if label is None:
            base = q.to_base_units()
            return Unit(_compact(str(base.units)), dim, float(base.magnitude))
        return Unit(_compact(label), dim, float(q.to(label).magnitude))
    except Exception:
        return None


#: The units written with a metric prefix ("km", "mAh", "kPa"). pint puts a prefix on any unit, so
#: a word would read as one: "cat" centi-atmospheres, "care" centi-ares, "hat" hecto-atmospheres.
_PREFIXABLE = frozenset("""meter gram second liter watt volt ampere hertz joule pascal ohm newton
    calorie ampere_hour watt_hour volt_ampere mole siemens farad henry tesla weber coulomb katal
    becquerel gray sievert lumen lux candela bar electron_volt tonne metric_ton""".split())


#: The prefixes of a thousand million million and more, and the units written with them ("PWh", "Pg").
_HUGE_PREFIXES = frozenset({"peta", "exa", "zetta", "yotta", "ronna", "quetta"})
_HUGE_PREFIXABLE = frozenset({"watt", "joule", "watt_hour", "gram", "meter", "hertz"})


def _prefixed_word(token: str) -> bool:
    """Whether pint reads the word ``token`` only as a metric prefix on a unit that takes none, or a
    huge prefix on a unit never so written ("Elm": exa-lumens)."""
    if not token.isalpha():
        return False
    readings = ureg().parse_unit_name(token)
    return bool(readings) and all(
        prefix and (unit not in _PREFIXABLE or prefix in _HUGE_PREFIXES and unit not in _HUGE_PREFIXABLE)
        for prefix, unit, _ in readings)


_SPACED_EXPONENT = re.compile(r"([A-Za-z]+)\s([23])")
_SUPERSCRIPT = re.compile(r"(?<=[A-Za-z])([23²³])(?=$|/)")


@lru_cache(maxsize=8192)
def resolve_unit(token: str) -> Unit | None:
    """The unit a token written after a number means, or None.

    ``token`` may be compound ("km/h", "requests per minute", "MB/s")."""
    token = token.strip()
    if spaced := _SPACED_EXPONENT.fullmatch(token):  # "km 2": a length whose superscript was lost
        base = resolve_unit(spaced[1])
        return resolve_unit(spaced[1] + spaced[2]) if base and base.dimension == "[length]" else None
    if not token or len(token) > 40 or token in NOT_UNITS or (len(token) > 1 and token.lower() in NOT_UNITS):
        # in any case but a single letter's ("Unit", "Fr", "St", "RD"; "A" is amperes)
        return None
    unit = _data_unit(token)
    if unit is not None:
        return unit
    if token in ALIASES:
        return _pint_unit(ALIASES[token])
    if token.lower() in ALIASES and len(token) > 3:
        return _pint_unit(ALIASES[token.lower()])
    if (len(token) == 1 and token not in ONE_LETTER_UNITS) or _prefixed_word(token):
        return None
    expr = token.replace("²", "2").replace("³", "3")
    expr = _SUPERSCRIPT.sub(r"**\1", expr)
    if " per " in expr:
        num, _, den = expr.partition(" per ")
        a, b = resolve_unit(num), resolve_unit(den)
        if a is None or b is None or a.offset or b.offset or a.dimension == "[information]":
            return None  # as for "GB/month": pint would read a data size per time as a frequency
        return _pint_unit(f"({ALIASES.get(num, num)}) / ({ALIASES.get(den, den)})")
    if "/" in expr:
        num, _, den = expr.partition("/")
        numerator = resolve_unit(num)
        if numerator is None or numerator.dimension == "[information]" or resolve_unit(den) is None:
            return None  # (data per time is read by _data_unit; "GB/month" is not a unit here)
        expr = f"({ALIASES.get(num, num)}) / ({ALIASES.get(den, den)})"
    unit = _pint_unit(expr)
    if unit is None and len(token) > 3 and token[0].isupper():
        unit = _pint_unit(expr.lower())  # "Minutes", "HOURS"
    return unit


# --- money --------------------------------------------------------------------

#: Currency symbols (longest first when matched) → ISO 4217.  "¥" is decided
#: by the text around it (see values.py).
SYMBOLS: dict[str, str] = {
    "US$": "USD", "U.S.$": "USD", "CA$": "CAD", "C$": "CAD", "AU$": "AUD", "A$": "AUD",
    "NZ$": "NZD", "HK$": "HKD", "NT$": "TWD", "S$": "SGD", "R$": "BRL", "MX$": "MXN",
    "CN¥": "CNY", "RMB¥": "CNY", "JP¥": "JPY", "$": "USD", "€": "EUR", "£": "GBP", "¥": "¥",
    "￥": "¥", "₩": "KRW", "₹": "INR", "₽": "RUB", "₺": "TRY", "฿": "THB", "₫": "VND",
    "₪": "ILS", "₱": "PHP", "₴": "UAH", "₦": "NGN", "zł": "PLN", "Rs.": "INR", "Rs": "INR",
}

#: Currency words → ISO 4217.
WORDS: dict[str, str] = {
    "dollar": "USD", "dollars": "USD", "us dollars": "USD", "usd": "USD", "euro": "EUR",
    "euros": "EUR", "yen": "JPY", "yuan": "CNY", "renminbi": "CNY", "rmb": "CNY",
    "pounds sterling": "GBP", "rupees": "INR", "rupee": "INR", "dólares": "USD", "dollari": "USD",
    "元": "CNY", "块": "CNY", "块钱": "CNY", "人民币": "CNY", "元人民币": "CNY", "美元": "USD",
    "美金": "USD", "欧元": "EUR", "英镑": "GBP", "港元": "HKD", "港币": "HKD", "日元": "JPY",
    "円": "JPY", "ドル": "USD", "ユーロ": "EUR", "ポンド": "GBP", "ウォン": "KRW", "韩元": "KRW",
}

#: ISO codes accepted next to a number (price-parser's list, plus RMB).
CODES = frozenset(c for c in CURRENCY_CODES if re.fullmatch("[A-Z]{3}", c)) | {"RMB"}
