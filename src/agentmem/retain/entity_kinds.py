"""What kind of thing a name denotes, read from the name and the words around it.

spaCy's small model labels unfamiliar names almost at random in chat text (a first name as a
place, a city as a person), so its label is one weak vote among others:

- **the name's shape**: a title ("Dr. Okafor"), a known first name, a corporate suffix
  ("Fernwood Labs", "Ferrox GmbH"), a place word ("Lake Bled", "Main Street"), an event word
  ("Glastonbury Festival", "Porto 10k"), "Project X", a code ("INV-20931");
- **category nouns** next to it: "my sister Giulia", "a vendor called Quixotrix", "Giulia is a
  marine biologist", "Marco's sister is Giulia", "Trilha, a hiking app";
- **syntax around it**: a place preposition ("in Naples", "flew to Yerevan", "back from
  Chengdu"), a possessive with a family or role noun ("Marco's sister"), a verb people do
  ("Tigran flew", "Siobhan said"), "X and I", "work at X", "launch X";
- **an animate subject or object**: a verb, state or phrase whose subject is a person, also
  after auxiliaries ("Jordan is coming over", "Sydney has been feeling down", "Paris is
  pregnant", "Marta got the job", "Dakota can't make it tonight"), the object of a verb of
  meeting or telling ("I met August", "told Savannah", "I'm seeing Regina"), "X and her
  husband". These decide whether a month word names someone (:func:`reads_as_person`: "April
  said", but "In April we moved");
- **a traveller**: the subject of a verb of motion with a destination, a place's name or an
  occasion ("Florence is moving to Leeds", "Jan is coming to the wedding"): a month or a
  storm passes ("August flew by", "May is coming to an end") but goes nowhere;
- **a companion**: the one a meal or a drink is shared with ("dinner with Tariq");
- **an addressee**: a name set off by a comma or a greeting at the edge of a sentence spoken
  to "you" ("Thanks, Priya!", "Omar, are you coming?");
- **a climate**: the subject of a predicate about the weather ("Savannah is so humid in
  July"), which describes a place and never a person;
- **a title**: a name inside double quotes ("I loved “The Name of the Wind”");
- **like with like**: "X and Y" where Y is a person's name ("Florence and Harry got
  engaged"); a "his"/"her" after a name opening its sentence ("Ifeoma started her new job");
- **a route**: the path of a journey ("drove through Tuscany", "flew via Zurich").

Each cue adds a weight to a kind; the heaviest kind wins and its weight is the mention's
confidence, which the bank sums over all mentions of an entity (``retain/link.py``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

__all__ = [
    "CODE_RE",
    "DETERMINERS",
    "JOB_NOUNS",
    "NATIONALITY_LABELS",
    "POSSESSIVES",
    "QUOTES",
    "RACE_RE",
    "decide_kind",
    "describes_someone",
    "is_common_word_start",
    "is_name_suffix",
    "is_qualification",
    "kind_evidence",
    "opens_a_quote",
    "reads_as_person",
    "voted_kind",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# How much each kind of evidence weighs.
SPACY_WEIGHT = 1.0
FIRST_NAME_WEIGHT = 2.0
#: A rarer first name (``entities.given_names``) weighs as spaCy's label: a tie goes to the
#: person. Chosen on the labelled set, flat from 0.5 to 1.25.
GIVEN_NAME_WEIGHT = SPACY_WEIGHT
CUE_WEIGHT = 1.5
MOTION_WEIGHT = 2.0
STRONG_CUE_WEIGHT = 3.0
SHAPE_WEIGHT = 4.0

_ORG_SUFFIXES = _words(
    "labs lab inc incorporated corp corporation co company ltd limited llc llp plc gmbh ag "
    "sa srl bv nv pty group holdings foundation university college institute academy bank "
    "pharma systems technologies software solutions partners imports trading foods logistics "
    "analytics energy retail shipping airlines airways motors media press post times studios "
    "records symphony orchestra association society council ministry agency capital ventures "
    "consulting industries enterprises networks insurance health united fc afc"
)
_ORG_HEADS = _words("university bank institute college ministry department school")
_PLACE_SUFFIXES = _words(
    "street st road rd avenue ave lane boulevard square park river lake mountains mountain "
    "hill hills valley beach bay island islands coast peninsula county province district "
    "region airport station harbour harbor bridge trail "
    # buildings and sights one visits ("St Paul's Cathedral", "Westminster Abbey"); not the
    # ones that are also family names (Church, Temple, Castle, Tower)
    "cathedral abbey basilica chapel mosque synagogue shrine palace museum stadium arena zoo "
    "plaza pier falls canyon glacier reservoir gardens"
)
_PLACE_HEADS = _words("lake mount mt mont monte river isle cape port fort")
_PRODUCT_SUFFIXES = _words("api app sdk")
_EVENT_SUFFIXES = _words(
    "festival olympics games cup championship championships marathon conference summit expo "
    "fair tournament derby run race parade gala"
)
RACE_RE = re.compile(r"^\d+k$", re.IGNORECASE)
# Degrees and exams are things one holds or sits, not products or organisations ("her PhD",
# "studying for the MCAT"); those that are also other names only with their periods ("B.A."
# and not British Airways' BA).
_QUALIFICATIONS = _words(
    "phd dphil mphil mba msc bsc mfa bfa llb llm edd ged gre gmat lsat mcat ielts toefl gcse "
    "gcses b.a. m.a. b.s. m.s. b.sc. m.sc. ph.d. m.d. j.d."
)
CODE_RE = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)+$")

# Nouns that say what kind of thing a nearby name is.
# Nouns of the people around someone, and of the roles people work in ("the new CTO at
# Klarna": a role's "at X" is an employer).
_KIN_AND_COMPANY_NOUNS = _words(
    "friend buddy pal partner wife husband girlfriend boyfriend fiance fiancee fiancé fiancée "
    "spouse son daughter brother sister sibling mom mum mother dad father aunt auntie uncle "
    "cousin niece nephew grandma grandpa grandmother grandfather grandson granddaughter gran "
    "granny neighbor neighbour roommate flatmate classmate kid kids children parents family "
    "wedding birthday girl boy guy man woman lady gentleman person client student"
)
JOB_NOUNS = _words(
    "colleague coworker co-worker teammate boss manager mentor mentee teacher tutor doctor "
    "dentist therapist physiotherapist physio coach landlord landlady intern assistant "
    "biologist engineer developer designer director ceo cto cfo founder cofounder co-founder "
    "architect professor lecturer nurse surgeon lawyer accountant analyst chef cook baker pilot "
    "driver farmer carpenter plumber electrician journalist writer author artist painter "
    "musician singer violinist pianist guitarist drummer actor actress dancer athlete player "
    "trainer scientist researcher programmer consultant officer captain soldier priest vet "
    "pharmacist librarian photographer editor producer lead volunteer recruiter banker "
    "economist chemist physicist historian"
)
_PERSON_NOUNS = _KIN_AND_COMPANY_NOUNS | JOB_NOUNS
_ORG_NOUNS = _words(
    "company firm startup start-up vendor supplier provider agency manufacturer retailer "
    "employer charity nonprofit band club label publisher newspaper magazine brand business "
    "corporation organisation organization team vendors suppliers companies firms employees "
    "staff ceo headquarters hq"
)
_PRODUCT_NOUNS = _words(
    "app application tool product platform service software device phone laptop game book "
    "novel film movie show series album song dashboard library framework website beta "
    "release version apps tools products test kit drug vaccine"
)
_PLACE_NOUNS = _words(
    "city town village country island region state province neighbourhood neighborhood "
    "district suburb capital restaurant cafe café bar pub hotel hostel airport station beach "
    "lake mountain valley cities towns countries"
)
_EVENT_NOUNS = _words("festival conference marathon race tournament concert match")
# What a performer gives: "the Adele concert" is hers, wherever it is.
_PERFORMANCES = _words("concert concerts gig gigs show tour recital premiere")
# A named animal is an individual as a person is ("our cat Luna", "a puppy named Biscuit").
_PET_NOUNS = _words(
    "pet pets dog dogs puppy puppies pup cat cats kitten kittens kitty goldfish parrot budgie "
    "hamster rabbit bunny horse pony tortoise turtle gecko ferret "
    # kinds of pet, which name one as well ("a rescue greyhound called Pepper")
    "rescue mutt greyhound labrador retriever poodle beagle terrier spaniel collie husky "
    "dachshund pug bulldog corgi chihuahua rottweiler doberman schnauzer whippet sheepdog "
    "tabby parakeet canary cockatiel lizard iguana snake mare stallion foal"
)
_NOUN_KINDS: dict[str, str] = {
    **{w: "event" for w in _EVENT_NOUNS},
    **{w: "place" for w in _PLACE_NOUNS},
    **{w: "product" for w in _PRODUCT_NOUNS},
    **{w: "org" for w in _ORG_NOUNS},
    **{w: "person" for w in _PERSON_NOUNS | _PET_NOUNS},
}
# After a possessive ("Kofi's wife", "Globex's office"): only nouns that settle the kind.
# A pet's owner is a person too ("April's dog").
_POSSESSED_PERSON = (_PERSON_NOUNS - _words("lead")) | _PET_NOUNS
# "staying at Jordan's place": a home is a person's (not "Paris's house prices").
_HOMES = _words("place house flat apartment")
_POSSESSED_ORG = _words("office offices headquarters hq ceo cto employees staff customers stock")

_PLACE_PREPOSITIONS = _words("in near around across throughout outside inside within")
# Being somewhere: "we stayed on Maui", "honeymoon on Crete" (an island is "on").
_STAYING = _words(
    "stay stayed staying live lived living honeymoon holiday vacation island beach born "
    "married engaged"
)
# A name after one of these is its object, and the verb after the name has another subject:
# "the guy from Denver said", "a postcard from Rome arrived".
_OBJECT_PREPOSITIONS = _PLACE_PREPOSITIONS | _words(
    "from at to of on into onto through via behind beyond with for by about"
)
_MOTION_WORDS = _words(
    "fly flew flown flying flies flight flights move moved moving moves drive drove driven "
    "driving go went going gone travel travelled traveled travelling traveling trip trips "
    "return returned returning relocate relocated head headed emigrated commute sail sailed "
    "walk walked ride rode back way visit visited holiday holidays vacation came come comes "
    "coming drives "
    # A way of travelling: "took the train to Lyon", "a ferry to Naxos", "tickets to Oslo".
    "train trains bus buses ferry ferries plane flight boat cruise tram taxi cab ticket tickets "
    "uber lyft"
)
_PERSON_VERBS = _words(
    "said says told tells asked asks thinks thought feels felt wants wanted loves loved likes "
    "liked hates hated flew flies drove drives walked walks visited visits married marries "
    "lives lived grew studied studies retired travelled traveled recommended recommends "
    "teaches taught trains trained plays played picked laughed cried smiled went goes came "
    "comes helped helps met meets turns turned prefers preferred cooked baked wrote writes "
    "sings sang smokes knows knew believes believed agreed decided promised invited called "
    "texted emailed mentioned suggested explained admitted moved"
)
# Verbs whose subject is a person, in every form that may follow a name or an auxiliary
# ("Jordan said", "Sydney has been feeling down", "Dakota will text"); unlike _PERSON_VERBS no
# verb of motion, which a storm, a month or a company does too ("August flew by").
_ANIMATE_VERBS = _words(
    "say says said saying tell tells told telling think thinks thought thinking feel feels "
    "felt feeling want wants wanted wanting love loves loved loving hate hates hated hating "
    "believe believes believed hope hopes hoped hoping wish wishes wished wishing promise "
    "promises promised promising laugh laughs laughed laughing cry cries cried crying smile "
    "smiles smiled smiling text texts texted texting email emails emailed emailing marry "
    "marries married marrying cook cooks cooked cooking bake bakes baked baking sing sings "
    "sang singing pray prays prayed praying sleep sleeps slept sleeping study studies studied "
    "studying graduate graduates graduated graduating retire retires retired retiring worry "
    "worries worried worrying complain complains complained complaining apologise apologised "
    "apologize apologized apologizing forgot forget forgets forgetting remember remembers "
    "remembered remembering miss misses missed missing admit admits admitted admitting "
    "babysit babysits babysat babysitting snore snores snored snoring dating"
)
# "come over", "dropped by", "swinging round": a visit, which only a person pays.
_VISIT_VERBS = _words(
    "come comes came coming drop drops dropped dropping stop stops stopped stopping swing "
    "swings swung swinging pop pops popped popping"
)
_VISIT_PARTICLES = _words("over round around by")
_GET_VERBS = _words("get gets got gotten getting")
# What a person gets or is, and a place or a company is not: "got married", "is pregnant".
_PERSON_STATES = _words(
    "married engaged divorced promoted fired pregnant sick ill tired exhausted hungover "
    "retired grounded dumped"
)
_PERSON_GAINS = _words("job promotion raise haircut tattoo degree diploma")
_RUN_VERBS = _words("run runs ran running finish finishes finished finishing")
_RACES = _words("marathon marathons race races half triathlon ultra ultramarathon relay")
_AUXILIARIES = _words(
    "am 'm is 's was are 're were be been being has have had 'd will 'll would can ca could "
    "should might must may shall do does did not n't never"
)
_BE = _words("am 'm is 's was are 're were be been being")
# Whose object is a person: "I met August", "told Savannah the news", "invited Indiana".
_PERSON_OBJECT_VERBS = _words(
    "meet met meeting tell told telling text texted texting invite invited inviting hug hugged "
    "hugging kiss kissed kissing marry married thank thanked babysit babysat "
    # "I'm seeing Regina on Friday": after "be", seeing someone is meeting them.
    "seeing"
)
# Verbs of going somewhere: their subject is a traveller when a destination follows.
_TRAVEL_VERBS = _words(
    "go goes went going move moves moved moving fly flies flew flying "
    "drive drives drove driving travel travels travelled traveled travelling traveling head "
    "heads headed heading relocate relocates relocated relocating return returns returned "
    "returning walk walks walked walking commute commutes commuted commuting"
)
# Coming to a place is what a tour, a launch or a chain does too ("Netflix is coming to
# India"); coming to an occasion only a guest does.
_COME_VERBS = _words("come comes came coming")
# Where people go and a month or the weather does not: "coming to the wedding".
_OCCASIONS = _words(
    "wedding party dinner lunch brunch breakfast barbecue bbq picnic birthday funeral reunion "
    "concert gig game match show gym office pub bar doctor dentist school church class meeting "
    "housewarming"
)
# Meals and drinks shared with someone: "dinner with Tariq", "coffee with Dakota".
_SHARED_MEALS = _words("dinner lunch breakfast brunch coffee drinks drink tea beer beers date")
# Words that address someone: "Thanks, Priya!", "Hi Tendai, ...", "Omar, are you coming?".
_GREETINGS = _words(
    "hi hey hello hiya yo thanks thank thx ty bye goodbye cheers congrats congratulations "
    "welcome dear morning night sorry"
)
_SECOND_PERSON = _words("you your yours you're u ya y'all")
# What the weather of a place is, and a person never is: "Savannah is so humid in July".
_CLIMATE_ADJECTIVES = _words(
    "humid muggy rainy sunny snowy windy foggy misty stormy drizzly cloudy overcast balmy "
    "tropical arid temperate"
)
# Verbs linking a subject to its weather: "Leeds is always rainy", "Savannah gets so humid".
_CLIMATE_LINKS = _words("is was 's are were be been gets got get getting stays stayed")
# "Dakota can't make it tonight": after "make it", the word that says it means attending.
_ATTENDING_AFTER = _words("tonight today tomorrow home back after")
_MAKE = _words("make makes made making")
# Whose object is a person more often than not, but a company sometimes ("called Globex").
_CONTACT_VERBS = _words("call called calling phoned rang emailed messaged asked")
_ORG_VERBS = _words("acquired acquires billed invoiced charged employs merged sent issued")
# A company hires us and ours, or people by the number ("Google hired my sister", "Acme
# hired 200 engineers"); a person hires "a nanny", and a name hired says nothing either
# ("Brandt hired Emil Sorensen": Brandt is a founder).
_HIRE_VERBS = _words("hired hires")
# A company recalls goods ("Tesla recalled my car"); a person recalls a night or a name.
_RECALL_VERBS = _words("recalled recalls")
_RECALLED_GOODS = _words(
    "car cars vehicle vehicles truck trucks model models product products phone phones "
    "laptop laptops battery batteries airbag airbags units"
)
# "Meta laid off 200 people": a phrasal verb of companies.
_LAID = _words("laid lays")
# A person sends photos as often as a company sends an invoice: "sent" says a company only
# with what companies send ("Hooli sent an invoice", not "Yasmin sent photos").
_SEND_VERBS = _words("sent sends")
_PRODUCT_VERBS_AFTER = _words("launches ships crashed crashes supports")
_PRODUCT_VERBS_BEFORE = _words(
    "launch launched launching ship shipped release released use uses using used install "
    "installed download downloaded bought buy buying ordered "
    # A work read or watched ("reading Dune", "watched Severance") is a product too.
    "read reads reading reread rereading watch watches watched watching binged binging"
)
# Verbs whose object is a thing and never a person: a game played, a book finished, a show
# streamed ("playing Zelda", "just finished Atomic Habits"); one plays *with* someone.
_USE_VERBS = _PRODUCT_VERBS_BEFORE | _words(
    "play plays played playing finish finishes finished finishing stream streams streamed streaming"
)
# A verb and its particle or preposition that take a service: "signed up for Coursera",
# "subscribed to Netflix", "switched from Spotify to Tidal", "logged into Slack".
_USE_PHRASES = {
    **dict.fromkeys(_words("subscribe subscribes subscribed subscribing"), _words("to")),
    **dict.fromkeys(_words("sign signs signed signing"), _words("for to")),
    **dict.fromkeys(_words("switch switches switched switching"), _words("to from")),
    **dict.fromkeys(_words("log logs logged logging"), _words("into onto")),
}
# What joins the names of a list: "installed Slack and Zoom", "playing Zelda, Hades".
_LIST_WORDS = _words("and or , &")
# What may stand between such a verb and the name it takes ("up for", "from Spotify to").
_PARTICLES = _words("to from for up with into onto in on the")
_ADJECTIVES = frozenset({"JJ", "JJR", "JJS"})
_TRADE_NOUNS = _words(
    "invoice invoices bill bills refund quote order shipment delivery payment offer offers"
)
# Buying from someone: "ordered pad thai from Deliveroo", "bought my bike from Decathlon".
# What one climbs or hikes is a mountain, a trail or a park.
_CLIMB_VERBS = _words(
    "hike hikes hiked hiking climb climbs climbed climbing summit summits summited summiting "
    "trek treks trekked trekking ascend ascends ascended ascending"
)
_TRADE_VERBS = _words("order ordered ordering buy bought buying purchase purchased purchasing")
# What one reads in a paper or a magazine ("an article in The Economist").
_WRITINGS = _words("article articles piece story stories column interview op-ed editorial ad")
_FLY = _words("fly flies flew flying flown")
# What one is with a company for: a customer's account, a company's deal.
_CLIENT_WORDS = _words(
    "bank banks banked banking insured insure insures merger partnership acquisition contract"
)
# What is bought, booked or paid through a seller or a service.
_DEAL_VERBS = _TRADE_VERBS | _words(
    "book booked booking pay paid paying rent rented renting sell sold selling"
)
# What is taken, written or bought where someone is: "sent photos from Zanzibar", "a postcard
# from Florence", "souvenirs from Marrakech" come from a place.
_KEEPSAKES = _words(
    "photo photos picture pictures pic pics selfie selfies snap snaps video videos postcard "
    "postcards souvenir souvenirs greetings"
)
# The first or last of which one has at an employer: "my last day at Acme".
_WORK_SPANS = _words("day days week weeks month shift")
# A part of an organisation: "the cardiology unit at Korle Bu", "the sales team at Globex".
_SUBUNITS = _words("team teams department unit ward division branch")
# What a book, a show or a game has or is printed as: "a copy of Dune", "season two of Severance".
_PARTS_OF_A_WORK = _words(
    "copy copies edition editions episode episodes season seasons chapter chapters volume "
    "volumes sequel sequels prequel remake reboot adaptation trailer soundtrack audiobook"
)
# What one holds to get into an event: "tickets for Coachella", "a pass for Glastonbury".
_ADMISSIONS = _words("ticket tickets pass passes wristband wristbands")
# A contest between two sides: "the Lakers lost to the Celtics", "the Warriors beat the Kings".
_CONTEST_VERBS = _words(
    "beat beats beating defeat defeats defeated lost lose loses losing play plays played "
    "playing tied drew face faces faced"
)
_PLAY = _words("play plays played playing")
# A side "won" or "lost" with no other side named: decided by what follows (_a_contest_ends).
_RESULT_VERBS = _words("won win wins lost lose loses")
_WHEN_DECIDED = _words("last yesterday tonight today on in at")
_TITLES = _words(
    "game match final finals championship title series cup league pennant playoff playoffs "
    "tournament"
)
_CONTEST_NOUNS = _words("game games match matches season fan fans playoffs lineup roster")
# A lower-case noun right after a name: "the Globex office", "the Falcon beta".
_ORG_FOLLOWERS = _words("office offices account headquarters staff employees")
_PRODUCT_FOLLOWERS = _words("app beta release update subscription")
_ORG_PREPOSITION_VERBS = _words("work works worked working job jobs join joined interned")
# Words of a career that make "at X" or "for X" an employer: "got promoted at Spotify".
_CAREER_WORDS = _words("promoted hired employed internship")
# Where one studies is a school: "studying medicine at Makerere" (not "studying for the GRE").
_STUDY_WORDS = _words("study studies studied studying enrolled enrol enroll")
_CALLED = _words("called named like")
# Tags of the words between a determiner and the noun it introduces.
_MODIFIER_TAGS = frozenset({"JJ", "JJR", "JJS", "POS", "VBG", "HYPH", "CD", "NNP"})
DETERMINERS = _words("a an the my our his her their your its this that one")
_COPULA = _words("is was 's are were")
_ADVERBS = _words("now also still just finally already often never always really")
_BEFORE_THE_RESULT = _ADVERBS | {"again"}  # "won again last night"
# How much of a state, after a form of "be": "Savannah is so tired", "Paris was very sick".
_DEGREE_ADVERBS = _words("so very too pretty super quite totally extremely")
_ADVERBS_AFTER_BE = _ADVERBS | _DEGREE_ADVERBS


def kind_evidence(doc: Doc, start: int, end: int) -> dict[str, float]:
    """Weights per kind from the name ``doc[start:end]`` and the words around it."""
    votes: dict[str, float] = defaultdict(float)
    words = [t.lower_ for t in doc[start:end]]
    _shape_votes(words, votes)
    _category_votes(doc, start, end, votes)
    _syntax_votes(doc, start, end, votes)
    return votes


def is_qualification(name: str) -> bool:
    """Whether ``name`` is a degree or an exam ("PhD", "B.A.", "MCAT"): a concept, whatever
    the words around it suggest ("her PhD" reads as an owned thing). It says the kind, not
    that the word is a name: "doing a PhD" stays a common noun's use."""
    key = name.casefold()
    return key in _QUALIFICATIONS or key.rstrip(".") in _QUALIFICATIONS


def decide_kind(votes: Mapping[str, float], default: str = "concept") -> tuple[str, float]:
    """The heaviest kind and its weight; ``default`` at weight 0 without evidence.

    Ties go to the more specific kind (person, org, place, product, event, then concept).
    """
    best = max(
        (k for k, w in votes.items() if w > 0), key=lambda k: (votes[k], -_ORDER[k]), default=None
    )
    return (default, 0.0) if best is None else (best, round(votes[best], 4))


def voted_kind(tally: Mapping[str, float], fallback: str) -> str:
    """The kind an entity takes from the summed confidences of all its mentions."""
    kind, weight = decide_kind(tally, fallback)
    return kind if weight > 0 else fallback


_ORDER = {k: i for i, k in enumerate(("person", "org", "place", "product", "event", "concept"))}


def _shape_votes(words: list[str], votes: dict[str, float]) -> None:
    if not words:
        return
    first, last = words[0], words[-1]
    if len(words) == 1 and CODE_RE.match(first):
        votes["concept"] += SHAPE_WEIGHT  # INV-20931, CN-118
    elif len(words) > 1 and (first == "project" or last in _PRODUCT_SUFFIXES):
        votes["product"] += SHAPE_WEIGHT  # "Project Lantern", "Quixotrix API"
    elif len(words) > 1 and (last in _ORG_SUFFIXES or (first in _ORG_HEADS and "of" in words)):
        votes["org"] += SHAPE_WEIGHT
    elif len(words) > 1 and (last in _EVENT_SUFFIXES or RACE_RE.match(last)):
        votes["event"] += SHAPE_WEIGHT
    elif len(words) > 1 and (last in _PLACE_SUFFIXES or first in _PLACE_HEADS):
        votes["place"] += SHAPE_WEIGHT


def _category_votes(doc: Doc, start: int, end: int, votes: dict[str, float]) -> None:
    """Category nouns before, after or linked by a copula to the name."""
    n = len(doc)
    # "my sister Giulia", "a vendor called Quixotrix", "vendors like Quillmark Labs".
    before = start - 1
    if before >= 0 and doc[before].lower_ in _CALLED:
        before -= 1
    if before >= 0 and doc[before].text == ",":  # "his daughter, Lily"
        before -= 1
    if (
        before >= 0
        and (kind := _NOUN_KINDS.get(doc[before].lower_))
        and not _opens_a_relative_clause(doc, before, end)
    ):
        votes[kind] += STRONG_CUE_WEIGHT
    # "Marco's sister is Giulia": the noun is the subject of a copula whose complement is X.
    if (
        start >= 2
        and _is_copula(doc[start - 1])
        and (kind := _NOUN_KINDS.get(doc[start - 2].lower_))
    ):
        votes[kind] += STRONG_CUE_WEIGHT
    # "Giulia is a marine biologist", "Trilha, a hiking app", "Hemi is my flatmate".
    j = end
    if j < n and (doc[j].text == "," or _is_copula(doc[j])):
        j += 1
        while j < n and doc[j].lower_ in _ADVERBS:
            j += 1
        if j < n and doc[j].lower_ in DETERMINERS:
            head = _noun_phrase_head(doc, j + 1)
            if head is not None and (kind := _NOUN_KINDS.get(head)):
                votes[kind] += STRONG_CUE_WEIGHT
    # "Zvartnots airport", "the Falcon beta": a lower-case category noun right after.
    if end < n and doc[end].text.islower():
        following = doc[end].lower_
        if following in _PLACE_SUFFIXES:
            votes["place"] += CUE_WEIGHT
        elif following in _PRODUCT_FOLLOWERS:
            votes["product"] += CUE_WEIGHT
        elif following in _ORG_FOLLOWERS:
            votes["org"] += SPACY_WEIGHT * 0.75  # weak: "the Dublin office" is a place's


_NAME_SUFFIXES = _ORG_SUFFIXES | _PLACE_SUFFIXES | _PRODUCT_SUFFIXES | _EVENT_SUFFIXES


def is_name_suffix(token: Token) -> bool:
    """A capitalised word inside a sentence that ends a name and says its kind: "Street",
    "Labs", "Festival", "API"."""
    return token.text[:1].isupper() and not token.is_sent_start and token.lower_ in _NAME_SUFFIXES


#: Possessive determiners: what stands before a word for what someone has or is to someone.
POSSESSIVES = _words("my your his her our their")
#: spaCy's labels of nationalities, religions and languages, which name no person or thing.
NATIONALITY_LABELS = frozenset({"NORP", "LANGUAGE"})


def _is_owned_thing(doc: Doc, start: int, end: int) -> bool:
    """A one-word name right after a possessive that is the head of its phrase: "his Switch",
    "my Peloton arrived", "her Kindle". Not a modifier ("my Lisbon trip": a place's), a
    family name ("my Mum") or a language ("my English class")."""
    return (
        end - start == 1
        and start > 0
        and doc[start - 1].lower_ in POSSESSIVES
        and (end >= len(doc) or not doc[end].tag_.startswith("NN"))
        and doc[start].lower_ not in _PERSON_NOUNS
        and doc[start].ent_type_ not in NATIONALITY_LABELS
    )


def is_a_breed(doc: Doc, start: int, end: int) -> bool:
    """Whether the name ``doc[start:end]`` is an animal's breed, no name: right before a pet
    noun, after an article, a possessive or adjectives ("a new Labrador puppy", "our Bengal
    cat", "a Maine Coon kitten")."""
    if end >= len(doc) or not doc[end].is_lower or doc[end].lower_ not in _PET_NOUNS:
        return False
    k = start - 1
    while k >= 0 and (
        (doc[k].tag_ in _ADJECTIVES and doc[k].is_lower)
        or (doc[k].tag_ in ("JJ", "NNP") and doc[k].is_title and not doc[k].is_sent_start)
    ):
        k -= 1  # "a new", "a German Shepherd puppy"
    return k >= 0 and (doc[k].lower_ in ("a", "an", "the") or doc[k].lower_ in POSSESSIVES)


def is_used_thing(doc: Doc, start: int) -> bool:
    """Whether the name at ``start`` is what a verb of using takes, which no person is: right
    after the verb ("playing Zelda", "installed Slack"), or after the verb's own particle or
    preposition ("signed up for Coursera", "switched from Spotify to Tidal")."""
    lead = start
    # Back over the article and adjectives: "bought a new Kindle Paperwhite".
    while lead > 1 and (doc[lead - 1].lower_ in DETERMINERS or doc[lead - 1].tag_ in _ADJECTIVES):
        lead -= 1
    if lead < 1:
        return False
    if doc[lead - 1].lower_ in _USE_VERBS:
        return True
    listed = True  # only names and "and"/"or" so far: "installed Slack and Zoom"
    for i in range(lead - 1, max(-1, lead - 7), -1):
        token = doc[i]
        if listed and token.lower_ in _USE_VERBS and i < lead - 1:
            return True
        taken = _USE_PHRASES.get(token.lower_)
        if taken is not None:
            return doc[lead - 1].lower_ in taken
        # Between the verb and the name: its particles and prepositions, the name it left
        # ("from Spotify to"), and the names listed before it ("Slack and").
        coordinated = token.lower_ in _LIST_WORDS and i > 0 and doc[i - 1].text[:1].isupper()
        if token.lower_ not in _PARTICLES and not token.text[:1].isupper() and not coordinated:
            return False
        listed = listed and (coordinated or token.text[:1].isupper())
    return False


def _is_a_home(doc: Doc, i: int) -> bool:
    """Whether the possessed word at ``i`` ("place", "house") is someone's home: not the head
    of a compound ("Paris's house prices"), nor a place in something ("London's place in
    history")."""
    if i + 1 >= len(doc):
        return True
    after = doc[i + 1]
    return not after.tag_.startswith("NN") and not (doc[i].lower_ == "place" and after.tag_ == "IN")


def is_climbed(doc: Doc, start: int, end: int) -> bool:
    """Whether the name at ``doc[start:end]`` is what a verb of climbing or hiking takes
    ("hiked Ben Nevis", "climbed the Matterhorn"), which is a place and never a person; not
    what the name owns ("hiking Tom's route")."""
    lead = start - 1 if start > 1 and doc[start - 1].lower_ == "the" else start
    if lead < 1 or doc[lead - 1].lower_ not in _CLIMB_VERBS:
        return False
    return end >= len(doc) or doc[end].lower_ not in ("'s", "’s", "'")


def is_a_team(doc: Doc, start: int, end: int) -> bool:
    """Whether the name at ``doc[start:end]`` is a team: a plural name after "the" that
    plays, beats or loses to another side, is played, beaten or played for, or has games,
    fans or a season ("the Lakers lost to the Celtics", "plays rugby for the Chiefs", "the
    Yankees game"). A family is also "the" and a plural ("the Sharmas invited us"), but
    does not beat other sides."""
    n = len(doc)
    last = doc[end - 1]
    if start < 1 or doc[start - 1].lower_ != "the" or not last.text.endswith("s"):
        return False
    if last.tag_ not in ("NNPS", "NNS", "NNP"):
        return False
    if end < n and doc[end].lower_ in _CONTEST_NOUNS:
        return True
    k = end
    while k < n and doc[k].lower_ in _ADVERBS:
        k += 1
    if k < n and doc[k].lower_ in _CONTEST_VERBS and _names_a_side(doc, k + 1):
        return True
    if k < n and doc[k].lower_ in _RESULT_VERBS and _a_contest_ends(doc, k + 1):
        return True
    p = start - 2
    if p >= 0 and doc[p].lower_ in ("vs", "versus", "vs."):
        return True
    if p >= 1 and doc[p].lower_ == "for":  # "plays rugby for the Chiefs"
        return any(doc[q].lower_ in _PLAY for q in range(max(0, p - 2), p))
    if p >= 0 and doc[p].lower_ in ("to", "against"):
        p -= 1
    return p >= 0 and doc[p].lower_ in _CONTEST_VERBS


_SCORE = re.compile(r"\d+[-–—]\d+")


def _a_contest_ends(doc: Doc, j: int) -> bool:
    """Whether what follows "won" or "lost" at ``j`` says a contest was decided: nothing more
    than a time ("the Warriors won again last night"), a title ("won the championship"), a
    margin ("lost by ten") or a score ("won 110-98"); not what a family wins or loses ("the
    Sharmas won the lottery", "lost their house")."""
    while j < len(doc) and doc[j].lower_ in _BEFORE_THE_RESULT:
        j += 1
    if j >= len(doc) or doc[j].is_punct or doc[j].lower_ in _WHEN_DECIDED:
        return True
    if _SCORE.fullmatch(doc[j].text):  # "3–1" as one token
        return True
    if j + 2 < len(doc) and doc[j].is_digit and doc[j + 2].is_digit:
        return doc[j + 1].text in ("-", "–", "—")
    return doc[j].lower_ == "by" or (
        doc[j].lower_ == "the" and j + 1 < len(doc) and doc[j + 1].lower_ in _TITLES
    )


def _is_a_service(doc: Doc, start: int, end: int, before: list[str]) -> bool:
    """Whether a one-word name right after "on" is what something was done on: an app, a
    site, a channel or an airline ("posted it on Instagram", "we talked on Zoom", "our
    flight on Delta"). Not after staying or travelling ("we stayed on Maui", "a holiday on
    Crete": islands), nor a weekday or month (no name here)."""
    return (
        end - start == 1
        and start >= 1
        and doc[start - 1].lower_ == "on"
        and not any(w in _MOTION_WORDS or w in _STAYING for w in before)
    )


def _names_a_side(doc: Doc, j: int) -> bool:
    """Whether "the" and a capitalised word, after an optional "to" or "against", start at
    ``j``: the other side of a contest."""
    if j < len(doc) and doc[j].lower_ in ("to", "against"):
        j += 1
    return j + 1 < len(doc) and doc[j].lower_ == "the" and doc[j + 1].text[:1].isupper()


def _is_copula(token: Token) -> bool:
    return token.lower_ in _COPULA and token.tag_ != "POS"  # "Bob's here", not "Bob's car"


def _noun_phrase_head(doc: Doc, j: int) -> str | None:
    """The last noun of the phrase starting at ``j`` ("marine biologist", "startup's tool")."""
    head = None
    for token in doc[j:]:
        if token.tag_ in ("NN", "NNS") or token.lower_ in _NOUN_KINDS:
            head = token.lower_
        elif token.tag_ not in _MODIFIER_TAGS and token.text not in ("'", "’"):
            break
    return head


def _syntax_votes(doc: Doc, start: int, end: int, votes: dict[str, float]) -> None:
    n = len(doc)
    # "went to the Louvre", "in the Alps": the article says nothing, the word before it does.
    lead = start - 1 if start > 1 and doc[start - 1].lower_ == "the" else start
    previous = doc[lead - 1].lower_ if lead > 0 else ""
    before = [doc[i].lower_ for i in range(max(0, lead - 6), lead - 1)]
    moving = any(w in _MOTION_WORDS for w in before) or _off_to(before)
    if is_a_team(doc, start, end):
        votes["org"] += SHAPE_WEIGHT  # as telling as "FC" in a name
        return
    if lead < start and end < n and doc[end].lower_ in _PERFORMANCES:
        # "going to the Coldplay concert": one goes to the concert, not to Coldplay, a band
        # (a weak vote: "the Adele concert" is a person's).
        votes["org"] += SPACY_WEIGHT / 2
        return
    if previous == "in" and before and before[-1] in _WRITINGS:
        votes["org"] += CUE_WEIGHT  # "an article in The Economist": a publisher
    elif previous in _PLACE_PREPOSITIONS:
        votes["place"] += CUE_WEIGHT
    elif lead == start and previous in _FLY:
        votes["org"] += CUE_WEIGHT  # "we flew Emirates to Dubai": one flies to a place
    elif previous == "with" and before and before[-1] in _CLIENT_WORDS:
        votes["org"] += CUE_WEIGHT  # "I bank with Monzo", "a merger with Globex"
    elif previous in ("through", "via") and any(w in _DEAL_VERBS for w in before):
        votes["org"] += CUE_WEIGHT  # "bought the tickets through Ticketmaster": a seller
    elif (previous in ("to", "through", "via") and moving) or (
        previous == "from" and (moving or (before and before[-1] in _COPULA))
    ):
        votes["place"] += MOTION_WEIGHT  # "flew to Yerevan", "drove through Tuscany"
    elif previous in ("visit", "visiting", "visited"):
        votes["place"] += CUE_WEIGHT
    elif is_climbed(doc, start, end):
        votes["place"] += SHAPE_WEIGHT  # "hiked Ben Nevis": as telling as "Mount" in a name
    elif previous == "from" and before and before[-1] in _KEEPSAKES:
        votes["place"] += CUE_WEIGHT  # "sent me a postcard from Florence"
    elif (
        previous == "for"
        and before
        and before[-1] in _PLAY
        and doc[start].lower_ not in _PERSON_NOUNS
    ):
        votes["org"] += CUE_WEIGHT  # "played for Ajax": a team ("played for Grandma": kin)
    elif previous == "of" and before and before[-1] in _PARTS_OF_A_WORK:
        votes["product"] += CUE_WEIGHT  # "his copy of Dune", "the last season of Severance"
    elif previous == "for" and before and before[-1] in _ADMISSIONS:
        votes["event"] += CUE_WEIGHT  # "bought tickets for Coachella"
    elif previous == "from" and (
        (before and before[-1] in _TRADE_NOUNS) or any(w in _TRADE_VERBS for w in before)
    ):
        votes["org"] += CUE_WEIGHT  # "an invoice from Hooli", "ordered pad thai from Deliveroo"
    elif previous in ("at", "for") and any(
        w in _ORG_PREPOSITION_VERBS or w in _CAREER_WORDS for w in before
    ):
        votes["org"] += MOTION_WEIGHT  # "works at Globex", "a pilot for Silk Air"
    elif previous == "at" and (
        (before and (before[-1] in JOB_NOUNS or before[-1] in _SUBUNITS))
        or any(w in _STUDY_WORDS for w in before)
        or _is_a_first_or_last_day(before)
    ):
        votes["org"] += CUE_WEIGHT  # "the new CTO at Klarna", "studying medicine at Makerere"
    elif previous == "at" and before and before[-1] in _SHARED_MEALS:
        votes["place"] += CUE_WEIGHT  # "brunch at Balthazar": where a meal is had
    elif previous == "at":
        votes["org"] += SPACY_WEIGHT / 2
        votes["place"] += SPACY_WEIGHT / 2
    elif previous == "with" and before and before[-1] in _SHARED_MEALS:
        votes["person"] += CUE_WEIGHT + 0.5  # "dinner with Tariq"
    elif previous == "with":
        votes["person"] += SPACY_WEIGHT * 0.75
    elif _is_a_service(doc, start, end, before):
        votes["product"] += CUE_WEIGHT  # "watched it on Netflix", "we met on Tinder"
    elif (
        is_used_thing(doc, start)
        and not modifies_a_noun(doc, end)
        and doc[start].ent_type_ != "EVENT"  # "watching the Super Bowl": an event watched
    ) or (previous == "to" and before and before[-1] in ("upgrade", "upgraded")):
        # "playing Zelda", "bought a new Kindle Paperwhite"; the roll of "a California roll"
        votes["product"] += CUE_WEIGHT
    elif _makes_what_is_used(doc, start, end):
        votes["org"] += CUE_WEIGHT  # "bought a Dyson vacuum": the vacuum's maker
    elif previous in _ORG_PREPOSITION_VERBS:  # "join Veridia Pharma"
        votes["org"] += CUE_WEIGHT
    elif _is_person_object(doc, start):
        votes["person"] += CUE_WEIGHT
    elif _is_owned_thing(doc, start, end) or is_brand_use(doc, start, end):
        votes["product"] += CUE_WEIGHT  # "his Switch", "my Peloton arrived", "a Prius"
    elif previous in _CONTACT_VERBS:
        votes["person"] += SPACY_WEIGHT * 0.75  # below the model's label: "called Globex"

    if _is_addressee(doc, start, end):
        votes["person"] += CUE_WEIGHT + 0.5
    if _is_quoted(doc, start, end):
        votes["product"] += STRONG_CUE_WEIGHT  # "The Name of the Wind": a title
    if _owns_what_follows(doc, start, end):
        votes["person"] += CUE_WEIGHT
    if end >= n:
        return
    if _has_climate(doc, end):
        votes["place"] += SHAPE_WEIGHT  # as telling as "Lake" in a name
        return
    # "The guy from Denver said": the object of a preposition is no subject.
    subject = previous not in _OBJECT_PREPOSITIONS
    if subject and _is_traveller(doc, end):
        votes["person"] += CUE_WEIGHT
    following = doc[end].lower_
    # "Jordan's coming over": an "'s" before what a person does is "is", not a possessive.
    animate = subject and _is_animate_subject(doc, end)
    if following in ("'s", "’s", "'") and end + 1 < n and not animate:
        possessed = doc[end + 1].lower_
        if possessed in _POSSESSED_PERSON or (possessed in _HOMES and _is_a_home(doc, end + 1)):
            votes["person"] += STRONG_CUE_WEIGHT
        elif possessed in _POSSESSED_ORG:
            votes["org"] += CUE_WEIGHT
        return
    if following == "and" and _is_partner_of(doc, end + 1):
        votes["person"] += STRONG_CUE_WEIGHT
        return
    if following == "and" and end + 1 < n and _is_persons_name(doc[end + 1]):
        votes["person"] += CUE_WEIGHT  # "Florence and Harry got engaged"
    if lead >= 2 and previous == "and" and doc[lead - 2].lower_ in ("me", "i"):
        votes["person"] += STRONG_CUE_WEIGHT
    elif (
        start >= 2
        and previous == "and"
        and _is_persons_name(doc[start - 2])
        and not is_used_thing(doc, start)  # "use Jira and Notion": things used, not people
    ):
        votes["person"] += CUE_WEIGHT  # "Harry and Florence": joined like with like
    if animate:
        votes["person"] += CUE_WEIGHT + 0.5
        return
    if not subject:
        return
    k = end
    if _joined_to_a_name(doc, k):
        k += 2  # "Olu and Chidi went": the verb is both names'
    while k < n and doc[k].lower_ in _ADVERBS:
        k += 1
    verb = doc[k].lower_ if k < n else ""
    if _comes_out(doc, k):
        votes["product"] += CUE_WEIGHT
    elif verb in _PERSON_VERBS:
        votes["person"] += CUE_WEIGHT + 0.5
    elif _does_what_companies_do(doc, k):
        votes["org"] += CUE_WEIGHT
    elif verb in _PRODUCT_VERBS_AFTER:
        votes["product"] += CUE_WEIGHT


def _joined_to_a_name(doc: Doc, k: int) -> bool:
    """Whether ``doc[k:]`` is "and" and one capitalised word that is no sentence's first
    ("Olu and Chidi went"): a name joined to the one before, subject of the same verb."""
    return (
        k + 2 < len(doc)
        and doc[k].lower_ == "and"
        and doc[k + 1].text.istitle()
        and doc[k + 1].text != "I"
        and not doc[k + 1].is_sent_start
        and doc[k + 1].tag_ in ("NNP", "NN")
    )


def _comes_out(doc: Doc, k: int) -> bool:
    """Whether ``doc[k:]`` says a thing is released: "comes out (in September)", "came out
    last year"; not who comes out to or as something ("Sam came out to his parents")."""
    n = len(doc)
    return (
        k + 1 < n
        and doc[k].lower_ in _COME_VERBS
        and doc[k + 1].lower_ == "out"
        and (k + 2 >= n or doc[k + 2].lower_ not in ("to", "as", "of", "with", "and"))
    )


def reads_as_person(doc: Doc, start: int, end: int) -> bool:
    """Whether grammar alone says ``doc[start:end]`` names a person, whatever the word.

    Only cues that hold for any conversation count: the subject of a verb, state or phrase
    whose subject is a person ("April said", "June is my sister", "May and I", "Jordan is
    coming over"), the object of a verb of meeting, telling or calling ("I met August", "I
    called April"), "me and X", "X and her husband", a possessive with a family or role
    noun or a pet ("June's husband", "April's dog"), a traveller ("Jan is coming to the
    wedding") and an addressee ("Thanks, June!"). A motion verb without a destination does
    not count: "August flew by".
    """
    n = len(doc)
    previous = doc[start - 1].lower_ if start > 0 else ""
    if _is_animate_subject(doc, end) or _is_person_object(doc, start) or _is_traveller(doc, end):
        return True
    if _is_addressee(doc, start, end):
        return True
    # "I called April", but not "a festival called May Day".
    if previous in _CONTACT_VERBS and start >= 2 and doc[start - 2].tag_ in ("PRP", "NNP"):
        return True
    if start >= 2 and previous == "and" and doc[start - 2].lower_ in ("me", "i"):
        return True
    if end + 1 < n and doc[end].lower_ == "and" and _is_partner_of(doc, end + 1):
        return True
    if end + 1 < n and doc[end].lower_ in ("'s", "’s"):
        return doc[end + 1].lower_ in _POSSESSED_PERSON
    # "June is my sister": a copula linking the name to a person noun.
    votes: dict[str, float] = defaultdict(float)
    _category_votes(doc, start, end, votes)
    return decide_kind(votes)[0] == "person" and votes["person"] >= STRONG_CUE_WEIGHT


def _past_group(doc: Doc, i: int) -> int:
    """Past "from" and the group a person is introduced by ("Nkechi from accounting", "Sam
    from my team", "Dee from next door"), a common noun; else ``i``."""
    n = len(doc)
    if i >= n or doc[i].lower_ != "from":
        return i
    j = i + 1
    if j < n and doc[j].tag_ in ("DT", "PRP$"):
        j += 1
    if j + 1 < n and doc[j].tag_ == "JJ" and doc[j].is_lower:
        j += 1
    if j < n and doc[j].tag_ in ("NN", "NNS") and doc[j].is_lower:
        return j + 1
    return i


def _is_animate_subject(doc: Doc, end: int) -> bool:
    """Whether the words after a name make it the subject of what only a person does or is:
    "Jordan said", "Sydney has been feeling down", "Jordan's coming over", "Paris is
    pregnant", "Marta got the job", "Carolina got married"; also past the group the person
    is from ("Nkechi from accounting says")."""
    n = len(doc)
    end = _past_group(doc, end)
    k, be = _past_auxiliaries(doc, end)
    if k >= n or (k == end and doc[k].tag_ not in ("VBD", "VBZ")):
        # Without an auxiliary only a finite verb follows its subject ("Jordan said"); a
        # base form or participle right after a name is something else ("a Jordan trip").
        return False
    verb = doc[k]
    following = doc[k + 1].lower_ if k + 1 < n else ""
    if be and verb.tag_ != "VBG":
        # After a form of "be", a state ("is pregnant") or progressive ("is feeling"); a
        # participle is passive, its subject done to ("Georgia was visited").
        return verb.lower_ in _PERSON_STATES
    word = verb.lower_
    if word in _ANIMATE_VERBS:
        return True
    if word in _VISIT_VERBS and (
        following in _VISIT_PARTICLES
        or (following == "with" and k + 2 < n and doc[k + 2].lower_ in ("me", "us"))
    ):
        return True  # "Jordan is coming over", "Shanelle is coming with us"
    if word in _MAKE and following == "it" and _means_attending(doc, k + 2):
        return True  # "Dakota can't make it tonight", but not "Stripe made it easy"
    if word in _GET_VERBS and following in _PERSON_STATES:
        return True
    # "Marta got the job", "Olu ran the Lagos marathon": what only a person gets or runs.
    gains = _PERSON_GAINS if word in _GET_VERBS else _RACES if word in _RUN_VERBS else None
    if gains is None:
        return False
    j = k + 1
    while j < n and doc[j].tag_ in ("DT", "PRP$", "JJ", "CD", "NNP", "NNPS"):
        j += 1
    # The thing may be named ("the Boston Marathon").
    return any(t.lower_ in gains or RACE_RE.match(t.text) for t in doc[k + 1 : j + 1])


def _past_auxiliaries(doc: Doc, end: int) -> tuple[int, bool]:
    """Where the verb after a subject ending at ``end`` can start, past its auxiliaries and
    adverbs ("can't", "has been", "is so"), and whether the last of them is a form of "be"
    (adverbs after it keep it: "is always")."""
    n = len(doc)
    k = end
    be = False
    while k < n and (
        (word := doc[k].lower_) in _AUXILIARIES
        or word in _ADVERBS
        or (be and word in _DEGREE_ADVERBS)  # "is so tired"
    ):
        be = word in _BE or (be and word in _ADVERBS_AFTER_BE)
        k += 1
    return k, be


def _means_attending(doc: Doc, j: int) -> bool:
    """Whether the words from ``j`` on, after "make it", make it mean getting somewhere or
    being there ("make it tonight", "made it home", "make it to the party", "can't make
    it."), not making something so ("made it easy", "make it work")."""
    if j >= len(doc) or doc[j].is_punct or doc[j].is_sent_start:
        return True
    return doc[j].tag_ in ("IN", "TO", "RP") or doc[j].lower_ in _ATTENDING_AFTER


def _verb_after_subject(doc: Doc, end: int) -> int | None:
    """The position of the verb a subject ending at ``end`` governs, past auxiliaries and
    adverbs; ``None`` where none can follow. Without an auxiliary only a finite verb follows
    its subject ("Jan flew to Oslo"); after "be" a participle is passive ("was moved")."""
    n = len(doc)
    k, be = _past_auxiliaries(doc, end)
    if k >= n or (k == end and doc[k].tag_ not in ("VBD", "VBZ", "VBP")):
        return None
    if be and doc[k].tag_ != "VBG":
        return None
    return k


def _is_traveller(doc: Doc, end: int) -> bool:
    """Whether the name before ``end`` is the subject of a verb of motion with a destination:
    a place's name or an occasion ("Florence is moving to Leeds", "Jan is coming to the
    wedding", "June flew to Oslo"), or a place it sets out from ("Oluwaseun is flying in from
    Lagos"). A month or the weather comes and goes but never to somewhere ("May is coming to
    an end", "August flew by", "June is going to be busy")."""
    k = _verb_after_subject(doc, end)
    if k is None:
        return False
    verb = doc[k].lower_
    if verb not in _TRAVEL_VERBS and verb not in _COME_VERBS:
        return False
    j = k + 1
    if j < len(doc) and doc[j].tag_ in ("RB", "RP"):
        j += 1  # "moving back to Leeds"
    if j + 1 >= len(doc):
        return False
    if doc[j].lower_ == "from" and verb in _TRAVEL_VERBS:
        # Where a journey starts: "Oluwaseun is flying in from Lagos".
        return _is_destination(doc, j + 1, places=True)
    if doc[j].lower_ != "to":
        return False
    return _is_destination(doc, j + 1, places=verb in _TRAVEL_VERBS)


def _is_destination(doc: Doc, j: int, *, places: bool) -> bool:
    """Whether the words from ``j`` on, after "to", name an occasion ("the wedding", "Sam's
    party", "my cousin's birthday") or, with ``places``, a place's name ("Leeds")."""
    n = len(doc)
    first = doc[j]
    if (
        places
        and first.tag_ in ("NNP", "NNPS")
        and first.text[:1].isupper()
        and (j + 1 >= n or doc[j + 1].tag_ != "POS")
    ):
        return True  # a place's name; "Sam's party" is an occasion
    while j < n and (doc[j].tag_ in ("DT", "PRP$", "JJ", "POS", "NNP") or doc[j].text == "'"):
        j += 1
    while j < n and doc[j].tag_ in ("NN", "NNS") and doc[j].lower_ not in _OCCASIONS:
        j += 1  # "a work dinner"
    return j < n and doc[j].lower_ in _OCCASIONS


def _is_addressee(doc: Doc, start: int, end: int) -> bool:
    """Whether the name is the one spoken to: set off at the edge of its sentence (or
    quotation), by a comma before "you" ("Omar, are you coming?") or after a greeting or
    "you" ("Thanks, Priya!", "See you, Dakota", "Hi Tendai, how was it?"). A name inside a
    sentence, or a list of names ("Rome, Florence and Venice"), is not addressed."""
    n = len(doc)
    sent_start = start
    while sent_start > 0 and not doc[sent_start].is_sent_start:
        sent_start -= 1
    sent_end = end
    while sent_end < n and not doc[sent_end].is_sent_start:
        sent_end += 1
    quote = _quote_before(doc, start)
    if quote is not None:  # a quotation is a sentence of its own: "Welcome back, Tigran"
        sent_start = quote + 1
        sent_end = next((j for j in range(end, sent_end) if doc[j].text in QUOTES), sent_end)
    # Opening the sentence, or after a greeting that opens it: "Omar, ...", "Hi Tendai, ...".
    opener = start
    if opener > sent_start and doc[opener - 1].lower_ in _GREETINGS:
        opener -= 1
    opens = opener == sent_start
    closes = end >= sent_end or (doc[end].is_punct and doc[end].text not in ",;:")
    if opens and end < n and doc[end].text == ",":
        after = [t.lower_ for t in doc[end + 1 : min(end + 5, sent_end)]]
        if any(w in _SECOND_PERSON for w in after) or opener < start:
            return True
    if closes and start > sent_start:
        before = doc[start - 1]
        if before.lower_ in _GREETINGS:
            return True  # "Thanks Priya!"
        if before.text == ",":
            spoken = [t.lower_ for t in doc[sent_start : start - 1]]
            return bool(spoken) and (
                spoken[0] in _GREETINGS or any(w in _SECOND_PERSON for w in spoken[-2:])
            )
    return False


def _has_climate(doc: Doc, end: int) -> bool:
    """Whether the name before ``end`` is the subject of a predicate about the weather:
    "Savannah is so humid in July", "Leeds is always rainy", "Houston gets muggy"."""
    n = len(doc)
    k = end
    if k >= n or doc[k].lower_ not in _CLIMATE_LINKS:
        return False
    if doc[k].tag_ == "POS" and not (k + 1 < n and doc[k + 1].tag_ == "RB"):
        return False  # "Sunny's sunny smile" is a possessive; "Savannah's so humid" is not
    k += 1
    while k < n and doc[k].tag_ == "RB" and doc[k].lower_ not in ("not", "n't"):
        k += 1  # "so", "always", "really"
    return k < n and doc[k].lower_ in _CLIMATE_ADJECTIVES


def _is_person_object(doc: Doc, start: int) -> bool:
    """Whether the name is the object of a verb whose object is a person ("I met August",
    "told Savannah the news"): after a subject, an auxiliary or "to", or opening a command
    ("Tell June I said hi"); not after a noun ("the team meeting Globex hosted")."""
    if start < 1 or doc[start - 1].lower_ not in _PERSON_OBJECT_VERBS:
        return False
    if doc[start - 1].is_sent_start:
        return doc[start - 1].tag_ == "VB"  # an imperative: "Tell June I said hi"
    return doc[start - 2].tag_ in ("PRP", "NNP", "NNPS", "MD", "RB", "TO") or (
        doc[start - 2].lower_ in _AUXILIARIES
    )


#: Double quotes, around a title.
QUOTES = frozenset('"“”')


def _is_quoted(doc: Doc, start: int, end: int) -> bool:
    """Whether the name is all its double quotes hold, punctuation aside: a title ("I loved
    “Dune”", "we watched "Encanto"!"). A name inside a quoted saying ("she texted "Jake is
    coming"") is read as anywhere else."""
    opening = _quote_before(doc, start)
    if opening is None or any(not t.is_punct for t in doc[opening + 1 : start]):
        return False
    for token in doc[end:]:
        if token.text in QUOTES:
            return True
        if token.is_sent_start or not token.is_punct:
            return False
    return False


def opens_a_quote(doc: Doc, i: int) -> bool:
    """Whether token ``i`` is the first word of a quotation ("he wrote "Happy birthday!""),
    capitalised there as at the start of a sentence."""
    return i > 0 and not doc[i].is_sent_start and _quote_before(doc, i) == i - 1


def _quote_before(doc: Doc, i: int) -> int | None:
    """The position of the double quote left open before token ``i`` in its sentence."""
    quotes = [j for j in range(doc[i].sent.start, i) if doc[j].text in QUOTES]
    return quotes[-1] if len(quotes) % 2 == 1 else None


# Possessives only a person has: a company's or a city's things are "its" or "their".
_GENDERED_POSSESSIVES = _words("his her")


def _owns_what_follows(doc: Doc, start: int, end: int) -> bool:
    """Whether the name opens its sentence and a "his" or "her" follows before any other
    name: the subject's own ("Ifeoma started her new job", "Ravi broke his ankle")."""
    if not doc[start].is_sent_start:
        return False
    for token in doc[end:]:
        if token.is_sent_start or token.tag_ in ("NNP", "NNPS") or token.lower_ in ("and", "or"):
            return False
        if token.tag_ == "PRP$" and token.lower_ in _GENDERED_POSSESSIVES:
            return True
    return False


def _is_persons_name(token: Token) -> bool:
    """A proper noun the model labels a person, inside its sentence (where its label is
    not the guess it is for a word opening one): the other half of "X and Y"."""
    return token.ent_type_ == "PERSON" and token.tag_ == "NNP" and not token.is_sent_start


def _is_partner_of(doc: Doc, j: int) -> bool:
    """Whether the words from ``j`` on, after "X and", are "I"/"me" or a possessive pronoun
    with a family or role noun: "Ines and her husband", "Austin and I"."""
    if j >= len(doc):
        return False
    if doc[j].text in ("I", "me"):
        return True
    return (
        doc[j].lower_ in ("his", "her", "their")
        and j + 1 < len(doc)
        and doc[j + 1].lower_ in _POSSESSED_PERSON
    )


def is_common_noun_use(doc: Doc, start: int, end: int) -> bool:
    """Whether a one-word name is used as a common noun: "an API", "the vendor's API", and
    for an acronym also after a common noun ("the payments API"). A brand after "a" or "an"
    is still a name (:func:`is_brand_use`)."""
    if end - start != 1 or start == 0:
        return False
    previous = doc[start - 1]
    if previous.lower_ in ("a", "an"):
        return not (
            is_brand_use(doc, start, end)
            or _affiliates_someone(doc, end)
            or _makes_what_follows(doc, start, end)
        )
    if previous.tag_ == "POS":
        return True
    return doc[start].text.isupper() and previous.tag_ in ("NN", "NNS") and previous.is_lower


_SOMEONE = _words("i you he she we they")
_BEING = _COPULA | _words("am 'm ’m 're ’re")


def describes_someone(doc: Doc, start: int, end: int) -> bool:
    """Whether a name says what someone is: after "a" or "an" (and adjectives), the
    complement of "is" whose subject is a person ("She's a New Yorker", "he's a real Texan",
    "my dad is a Republican", "I'm a proud Canadian"), not a thing ("It's a Toyota")."""
    k = start - 1
    while k >= 0 and doc[k].tag_ in ("JJ", "RB"):
        k -= 1
    if not (1 <= end - start <= 3 and k >= 2 and doc[k].lower_ in ("a", "an")):
        return False
    if end < len(doc) and doc[end].tag_.startswith(("NN", "JJ", "VBG")):
        return False  # "a huge Taylor Swift fan", "a Google engineer": the name modifies it
    subject = doc[k - 2].lower_
    return doc[k - 1].lower_ in _BEING and (subject in _SOMEONE or subject in _PERSON_NOUNS)


# Who someone is to an organisation, a school, a team or an artist: "a Google engineer",
# "a Harvard graduate", "a Yankees fan".
_AFFILIATED = _PERSON_NOUNS | _words(
    "employee employees graduate graduates grad alum alumna alumnus fan fans member members "
    "customer customers user users supporter supporters staffer owner owners"
)


def _is_a_first_or_last_day(before: list[str]) -> bool:
    """ "my last day at Acme", "her first week at Deloitte": where one person starts or
    leaves is an employer or a school ("our first day at Disneyland" is a holiday's)."""
    return (
        len(before) >= 3
        and before[-3] in ("my", "his", "her", "your")
        and before[-2] in ("first", "last")
        and before[-1] in _WORK_SPANS
    )


def _opens_a_relative_clause(doc: Doc, noun: int, end: int) -> bool:
    """Whether the name after the category noun at ``noun`` is the subject of a clause about
    that noun, not its title: "I finished the book Noor lent me", "we loved the film Sam
    recommended" (an object after a verb or preposition, then the name and a finite verb);
    not "the book Dune changed my life" (the subject of the sentence)."""
    return (
        end < len(doc)
        and doc[end].tag_ in ("VBD", "VBZ", "VBP")
        and noun >= 2
        and doc[noun - 1].lower_ in DETERMINERS
        and doc[noun - 2].tag_.startswith(("VB", "IN"))
    )


def _off_to(before: list[str]) -> bool:
    """Whether the words before a "to" say someone is off there ("We're off to Crete"), not
    that something is sent off ("I sent the form off to Klarna")."""
    return bool(before) and before[-1] == "off" and not any(w in _SEND_VERBS for w in before)


def _does_what_companies_do(doc: Doc, k: int) -> bool:
    """Whether the verb at ``k`` and what follows it are what a company, not a person, does:
    acquires, bills, sends an invoice, hires us or people by the number, recalls goods, lays
    people off. Not past the text's end ("dating Jake now": only adverbs follow)."""
    if k >= len(doc):
        return False
    verb = doc[k].lower_
    if verb in _ORG_VERBS:
        return verb not in _SEND_VERBS or _sends_a_bill(doc, k + 1)
    after = doc[k + 1] if k + 1 < len(doc) else None
    if after is None:
        return False
    if verb in _HIRE_VERBS:
        return after.tag_ in ("PRP", "PRP$", "CD")
    if verb in _RECALL_VERBS:
        return any(token.lower_ in _RECALLED_GOODS for token in doc[k + 1 : k + 5])
    return verb in _LAID and after.lower_ == "off"


def _sends_a_bill(doc: Doc, j: int) -> bool:
    """Whether what is sent, from ``j`` on, is one of the things companies send ("sent an
    invoice", "sent us the refund")."""
    for token in doc[j : j + 4]:
        if token.lower_ in _TRADE_NOUNS:
            return True
        if token.tag_.startswith("NN"):
            return False
    return False


def _makes_what_follows(doc: Doc, start: int, end: int) -> bool:
    """Whether a one-word name the model labels a company or product, or any name but a
    place's before a thing bought or used, modifies the noun after it: its maker's name ("a
    Nike hoodie", "bought a Dyson vacuum"), a name, unlike a place's in a dish's ("a
    California roll")."""
    return (
        doc[start].ent_type_ in ("ORG", "PRODUCT") and modifies_a_noun(doc, end)
    ) or _makes_what_is_used(doc, start, end)


# The model's labels of places and peoples: a name of one before a noun says where from.
_PLACE_LABELS = frozenset({"GPE", "LOC", "FAC", "NORP", "LANGUAGE"})


def _makes_what_is_used(doc: Doc, start: int, end: int) -> bool:
    """Whether the name before the noun a verb of using takes is that thing's maker ("bought
    a Dyson vacuum", "need a Canon lens"): not a place's or a people's ("ordered a
    California roll", "a Greek salad")."""
    return (
        modifies_a_noun(doc, end)
        and is_used_thing(doc, start)
        and doc[start].ent_type_ not in _PLACE_LABELS
    )


def _affiliates_someone(doc: Doc, end: int) -> bool:
    """Whether the name ending at ``end`` is followed by what someone is to it ("a Google
    engineer", "a Yankees fan"): the name is one, unlike a name in a common noun ("a
    California roll", "a Boston terrier")."""
    return (
        end < len(doc)
        and doc[end].is_lower  # not a title: "a Financial Analyst"
        and doc[end].lower_ in _AFFILIATED
        and doc[end - 1].ent_type_ not in NATIONALITY_LABELS
    )


def is_brand_use(doc: Doc, start: int, end: int) -> bool:
    """Whether a name after "a" or "an" (and up to two adjectives) is a brand standing for one
    of its products or branches: "drives a Prius", "an Airbnb in Lisbon", "at a Starbucks.",
    "got a Nintendo Switch", "announced a new MacBook".

    Written as names are (a capital, then lower case, with capitals inside at most as in
    "MacBook" or "iPad", unlike "an API", "a PhD"; its other words capitalised or numbers: "a
    Tesla Model 3"), no nationality ("an Italian", "a New Yorker"), the whole of its phrase (not "a
    California roll", "a Financial Analyst") and no description of someone ("she's a
    Gemini", "is a Labrador").
    """
    article = start - 1
    while article >= 0 and start - article <= 2 and doc[article].tag_ == "JJ":
        if not doc[article].is_lower:
            return False  # "a German Shepherd": the name is part of a longer one
        article -= 1  # "a new MacBook", "a used Prius"
    if not 1 <= end - start <= 3 or article < 0 or doc[article].lower_ not in ("a", "an"):
        return False
    text = doc[start].text
    lower = sum(c.islower() for c in text)
    written_as_a_name = (text[:1].isupper() and (text[1:].islower() or lower >= 2)) or (
        text[:1].islower() and text[1:2].isupper() and lower >= 2  # "an iPad", "an eBike"
    )
    if not written_as_a_name or is_qualification(text) or text.lower() in _PET_NOUNS:
        return False  # "a new Labrador" is a dog, no brand's product
    if not all(t.text[:1].isupper() or t.like_num for t in doc[start + 1 : end]):
        return False
    if any(t.ent_type_ in NATIONALITY_LABELS for t in doc[start:end]):
        return False
    following = doc[end] if end < len(doc) else None
    if (
        following is not None
        and following.ent_type_ not in ("DATE", "TIME")  # "a new iPad last week"
        and (following.tag_.startswith(("NN", "JJ")) or following.tag_ == "CC")
    ):
        return False
    before = doc[article - 1] if article >= 1 else None
    return before is None or not (_is_copula(before) or before.lower_ in ("such", "what"))


def is_common_word_start(doc: Doc, start: int, end: int) -> bool:
    """Whether a one-word name opening a sentence modifies the common noun after it.

    "Aisle seats are better": such a word is an ordinary word more often than a name.
    """
    return end - start == 1 and modifies_a_noun(doc, end)


def modifies_a_noun(doc: Doc, end: int) -> bool:
    """Whether the name ending at ``end`` modifies the common noun after it ("a California
    roll", "a Nike hoodie", "Aisle seats"): the noun is the thing, the name only says whose
    or where from. A word of time is no such noun ("played Zelda today")."""
    following: Token | None = doc[end] if end < len(doc) else None
    return (
        following is not None
        and following.tag_ in ("NN", "NNS")
        and following.text.islower()
        and following.ent_type_ not in ("DATE", "TIME")
    )
