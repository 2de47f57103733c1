"""Small word lists the answer extractor types questions and answers with (data only)."""

from __future__ import annotations

import re

QUESTION_WORDS = frozenset(
    "what who whom whose when where which why how is was are were does did do in on at the a an".split()
)
STOPWORDS = frozenset(
    """a an the of in on at to for from by with and or is was are were be been being does did do
    what who whom whose when where which why how that this these those as it its his her their
    associated known main primary another common type kind refer refers name""".split()
)
CJK_STOP = frozenset("的是了在和与吗呢什么多少哪一年时候何")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def cjk_grams(text: str) -> list[str]:
    """Content grams of the CJK text in ``text``, in order, without repeats.

    CJK runs are cut at non-CJK characters and at :data:`CJK_STOP` characters;
    each piece gives its character bigrams, or itself when one character long."""
    out: list[str] = []
    piece = ""
    for c in text + " ":
        if _CJK_CHAR.match(c) and c not in CJK_STOP:
            piece += c
            continue
        out += [a + b for a, b in zip(piece, piece[1:])] or ([piece] if piece else [])
        piece = ""
    return list(dict.fromkeys(out))
NUMBER_CUES = ("population", "how many", "how much", "number of", "length of", "inhabitants", "人口", "多少")
DATE_CUES = ("what year", "which year", "founding date", "date of", "in which year", "what date",
             "哪一年", "哪年", "什么时候", "何时", "几时")
COUNT_WORDS = frozenset(
    "population inhabitants people residents persons laps metres meters km miles 人 居民".split()
)
HEADS = frozenset(
    """sport artist creator director author singer band composer founder father mother husband
    wife son daughter candidate character profession occupation position party ideology genre
    line type medium format rank protagonist conflict war state location country city aircraft unit where""".split()
)
GENERIC_QUALIFIERS = frozenset(
    """album song single ep film movie band club novel series tv television play video game
    company magazine newspaper disambiguation soundtrack mixtape musical opera book poem
    episode studio record records season men s women s team the a an""".split()
)
CLASS_WORDS: dict[str, tuple[str, ...]] = {
    "sport": tuple(
        """ice hockey|field hockey|hockey|football|soccer|basketball|baseball|volleyball|tennis|
        golf|boxing|wrestling|sumo wrestling|rugby union|rugby league|cricket|athletics|
        cycling|swimming|diving|gymnastics|artistic gymnastics|bowling|speed skating|figure skating|
        skiing|handball|badminton|table tennis|motorsport|racing|rowing|fencing|judo|karate|
        taekwondo|snooker|darts|lacrosse|softball|water polo|archery|triathlon|canoeing|
        sailing|equestrian|polo|running|marathon|sprint|weightlifting|shooting|curling|gambling|
        poker|chess|mixed martial arts|kickboxing|bobsleigh|luge|biathlon|surfing|skateboarding""".replace("\n", "").split("|")
    ),
    "profession": tuple(
        """actor|actress|architect|artist|athlete|author|basketball player|bishop|businessman|chef|
        composer|cricketer|diplomat|director|economist|engineer|footballer|journalist|judge|lawyer|
        musician|painter|philosopher|photographer|physician|physicist|chemist|biologist|
        marine biologist|pilot|poet|politician|priest|anglican priest|chaplain|producer|professor|
        rapper|scientist|singer|soldier|songwriter|teacher|writer|novelist|historian|
        mathematician|surgeon|entrepreneur|broadcaster|comedian|dancer|designer|sculptor""".replace("\n", "").split("|")
    ),
    "position": tuple(
        """goalkeeper|defender|centre back|center back|full back|midfielder|defensive midfielder|
        attacking midfielder|winger|forward|striker|pitcher|catcher|shortstop|quarterback|
        point guard|shooting guard|small forward|power forward|center|centre""".replace("\n", "").split("|")
    ),
    "party": tuple(
        """republican|democratic|democrat|conservative|liberal|labour|labor|green|socialist|
        communist|progressive|independent|whig|federalist|national|reform""".replace("\n", "").split("|")
    ),
    "rank": tuple(
        """rear admiral|vice admiral|admiral|commodore|captain|brigadier general|major general|
        lieutenant general|general|colonel|lieutenant colonel|major|lieutenant""".replace("\n", "").split("|")
    ),
}
CLASS_WORDS["state"] = tuple(
    """alabama|alaska|arizona|arkansas|california|colorado|connecticut|delaware|florida|georgia|hawaii|
    idaho|illinois|indiana|iowa|kansas|kentucky|louisiana|maine|maryland|massachusetts|michigan|
    minnesota|mississippi|missouri|montana|nebraska|nevada|new hampshire|new jersey|new mexico|
    new york|north carolina|north dakota|ohio|oklahoma|oregon|pennsylvania|rhode island|
    south carolina|south dakota|tennessee|texas|utah|vermont|virginia|west virginia|washington|
    wisconsin|wyoming""".replace("\n", "").split("|")
)
CLASS_WORDS["genre"] = tuple(
    """comedy|romantic comedy|black comedy|comedy drama|drama|thriller|crime thriller|gangster|
    psychological thriller|horror|science fiction|fantasy|romance|action|action thriller|documentary|
    animated|animation|musical|western|crime|crime drama|mystery|adventure|war|biographical|
    historical|satire|parody|mockumentary|noir|film noir|superhero|martial arts|disaster|
    sitcom|soap opera|reality|sketch comedy|children s|young adult|detective fiction|
    rock|pop|pop rock|jazz|hip hop|country|folk|blues|heavy metal|metal|punk|punk rock|electronic|
    rap|r b|soul|reggae|classical|gospel|alternative rock|indie rock|indie pop|dance|techno|
    house|disco|funk|grunge|ska|new wave|synth pop|psychedelic rock|hard rock|progressive rock|
    role playing|platform|first person shooter|shooter|puzzle|strategy|simulation|racing|fighting|
    poetry|memoir|novella|short story|epic|tragedy|fable""".replace("\n", "").split("|")
)
CLASS_WORDS["format"] = tuple(
    """direct to video|sequel|prequel|spin off|remake|feature film|short film|
    television film|tv film|made for television|miniseries|television series|tv series|web series|
    anthology|studio album|live album|compilation album|ep|single|
    mixtape|box set|paperback|hardcover|e book|audiobook|podcast|radio|broadcast|
    comic|graphic novel|manga|anime|documentary|newspaper|magazine|video game|board game""".replace("\n", "").split("|")
)
CLASS_WORDS["occupation"] = CLASS_WORDS["profession"]
CLASS_WORDS = {k: tuple(t.strip() for t in v if t.strip()) for k, v in CLASS_WORDS.items()}

_BY = (r"\bby",)
_PLACE = (r"\blocated in(?: the (?:city|town|village) of)?", r"\bbased in", r"\bpublished in",
          r"\bborn in", r"\bsituated in", r"\bheadquartered in", r"\bin the (?:city|town|village) of")
#: Per question head, regexes after which the answer's name follows.
RELATION_CUES: dict[str, tuple[str, ...]] = {
    **{h: _BY for h in ("artist", "creator", "director", "author", "singer", "band", "composer")},
    "founder": (r"\bfounded by", r"\bestablished by"),
    "father": (r"\b(?:son|daughter|child) of", r"\bFather"),
    "mother": (r"\b(?:son|daughter|child) of", r"\bMother"),
    "husband": (r"\bwife of", r"\bmarried(?: to)?", r"\bSpouse"),
    "wife": (r"\bhusband of", r"\bmarried(?: to)?", r"\bSpouse"),
    "candidate": (r"\bcandidate", r"\bselected", r"\bwon by"),
    **{h: _PLACE for h in ("where", "location", "country", "city")},
}

_MAKERS = (
    "Airbus|Boeing|McDonnell Douglas|Douglas|Lockheed|Tupolev|Ilyushin|Antonov|Yakovlev|Sukhoi|Fokker|"
    "Embraer|Bombardier|Canadair|Cessna|Convair|Vickers|de Havilland|Hawker Siddeley|NAMC|ATR|BAe|"
    "British Aerospace|Curtiss|Sikorsky|Beechcraft|Saab|Dornier|Junkers|CASA|Learjet|Piper"
)
#: Per question head, a pattern whose first group is a name of the asked class
#: ("the Italo-Turkish War", "a Douglas DC-3").
NAMED: dict[str, str] = {
    **{h: r"((?:(?:[A-Z0-9][\w'’–-]*|of|the)\s+){1,4}War(?:\s+(?:I{1,3}|of\s+[A-Z][\w'’–-]*(?:\s+[A-Z][\w'’–-]*)?))?)\b"
       for h in ("war", "conflict")},
    "aircraft": rf"\b((?:{_MAKERS})\s+[A-Z]*[\w-]*\d[\w-]*(?:\s+[A-Z]?\d[\w-]*)?)",
}

#: Question verbs and the words documents use for the same event.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "built": ("built", "constructed", "construction", "erected", "completed", "opened"),
    "constructed": ("built", "constructed", "construction", "erected", "completed"),
    "founded": ("founded", "established", "formed", "created", "founding"),
    "established": ("founded", "established", "formed", "created", "opened"),
    "formed": ("formed", "founded", "established", "created", "raised"),
    "born": ("born", "birth"),
    "die": ("died", "death"),
    "released": ("released", "release", "issued"),
    "held": ("held", "first", "inaugurated", "founded", "established"),
    "introduced": ("introduced", "adopted", "issued", "replaced"),
}
