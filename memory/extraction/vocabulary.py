"""The word lists of the rule-based extractor: relations, pets, job titles, nationalities, pastimes, diets,
and the capitalised words that never name a person. The grammar (grammar.py) and the rules read them."""

from __future__ import annotations

# Relation words after "my": word -> attribute. For `relative` the word is also kept in the value
# ("Ana (cousin)"), since the attribute alone would lose it.
_REL = {
    "spouse": "husband wife spouse hubby",
    "partner": "partner boyfriend girlfriend fiance fiancé fiancee fiancée",
    "child": "son daughter kid child baby-girl baby-boy stepson stepdaughter sons daughters kids children",
    "sibling": "sister brother sibling twin sisters brothers siblings stepbrother stepsister",
    "parent": "mom mum mother dad father mommy daddy stepmom stepdad stepmother stepfather parents",
    "friend": "friend bff buddy friends",
    "colleague": "colleague coworker co-worker colleagues coworkers",
    "relative": "grandma grandmother grandpa grandfather granny grandson granddaughter aunt uncle cousin "
    "niece nephew mother-in-law father-in-law sister-in-law brother-in-law",
}
RELATIONS: dict[str, str] = {
    w.replace("-", " ") if w.startswith("baby") else w: attr for attr, words in _REL.items() for w in words.split()
}

PETS = set(
    "dog dogs puppy pup cat cats kitten kitty hamster rabbit bunny parrot bird budgie fish goldfish turtle turtles "
    "tortoise horse pony snake lizard gecko ferret chinchilla hedgehog cockatiel".split()
) | {"guinea pig"}
# A pet's value names the animal in its singular, so "my dogs Max and Rex" gives "Max (dog)" twice.
PET_SINGULAR = {"dogs": "dog", "cats": "cat", "turtles": "turtle", "pup": "puppy", "kitty": "cat"}

# Head nouns of job titles: "I'm a <title>" only counts when the phrase ends in one of these, because
# "I'm a big fan", "I'm a mess" and "I'm a mom" share the same grammar.
JOB_HEADS = (
    "engineer developer programmer designer architect scientist analyst consultant manager director teacher "
    "professor lecturer tutor nurse doctor physician surgeon dentist pharmacist therapist counselor counsellor "
    "psychologist psychiatrist lawyer attorney paralegal accountant banker economist journalist writer author "
    "editor reporter photographer illustrator animator musician singer actor actress dancer chef cook baker "
    "barista bartender waiter waitress cashier clerk receptionist secretary administrator officer firefighter "
    "paramedic pilot mechanic electrician plumber carpenter farmer veterinarian vet librarian researcher "
    "student intern founder co-founder cofounder ceo cto cfo coo vp president owner entrepreneur freelancer "
    "contractor technician specialist coordinator representative recruiter supervisor coach trainer "
    "instructor translator interpreter worker caregiver nanny soldier midwife optometrist physiotherapist "
    "tester sysadmin postdoc lead assistant associate salesperson marketer producer strategist"
).split()
# Leading words dropped from a title: they judge the person, they are not part of the title.
TITLE_NOISE = {"good", "great", "bad", "terrible", "proud", "real", "total", "decent", "busy", "happy", "tired"}

NATIONALITIES = set(
    "American British English Scottish Welsh Irish Canadian Mexican Brazilian Argentinian Argentine Chilean "
    "Colombian Peruvian Venezuelan Cuban Portuguese Spanish French German Italian Dutch Belgian Swiss Austrian "
    "Swedish Norwegian Danish Finnish Icelandic Polish Czech Slovak Hungarian Romanian Bulgarian Greek Turkish "
    "Russian Ukrainian Serbian Croatian Lithuanian Latvian Estonian Chinese Japanese Korean Vietnamese Thai "
    "Filipino Indonesian Malaysian Singaporean Indian Pakistani Bangladeshi Nepali Iranian Iraqi Israeli "
    "Lebanese Syrian Egyptian Moroccan Algerian Tunisian Nigerian Ghanaian Kenyan Ethiopian Australian".split()
)
INSTRUMENTS = (
    "guitar piano violin cello drums bass ukulele flute saxophone sax trumpet clarinet harp banjo viola trombone"
).split()
SPORTS = (
    "tennis football soccer basketball baseball volleyball golf hockey rugby cricket badminton squash chess "
    "poker pickleball padel"
).split()
OUTINGS = (
    "hiking running swimming skiing surfing climbing fishing camping cycling biking bowling dancing kayaking "
    "sailing skating snowboarding jogging"
).split()
DIETS = {"vegetarian", "vegan", "pescatarian", "pescetarian", "gluten-free", "keto", "kosher", "halal"}

# Capitalised words that start sentences but never name a person; a subject must not be one of these.
NON_NAMES = set(
    "I Actually Also Well So Yeah Yes No Oh Hey Hi Hello Thanks Thank The This That These Those It He She They "
    "We You My Our Your His Her Their There Here Today Tomorrow Yesterday Tonight Now Then Last Next Since "
    "Maybe Just Still And But Or If When What Where Who Why How Which Everyone Everybody Nobody Someone "
    "Somebody Anyone Anybody Everything Nothing Something Life Work School Music Art Mom Dad Mum Mother "
    "Father Family People Kids Children Friends Parents God Sure Cool Wow Great Nice Awesome Good Ok Okay "
    "Sorry Please Btw Update Correction Note Reminder Also Honestly Guess Lol Haha Monday Tuesday Wednesday "
    "Thursday Friday Saturday Sunday January February March April May June July August September October "
    "November December Christmas Easter One Two Both Each Every Some Many Most All Being Having".split()
)
