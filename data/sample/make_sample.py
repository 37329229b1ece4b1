"""Writes data/sample/: a small invented corpus in the Webis-ArgQuality-20 file format.

Every text, id and score here is made up for the sample (no published text is reused). Quality is a
latent value per dimension, z-normalised over all argumentative texts; comparisons cover every pair
of argumentative texts of a topic and are labelled Tie when the z-scores differ by less than 0.6.
Run `python data/sample/make_sample.py` to regenerate the CSV files.
"""

import csv
import itertools
import json
import math
from pathlib import Path

root = Path(__file__).resolve().parent / "webis-argquality20"
(root / "full").mkdir(parents=True, exist_ok=True)
(root / "raw").mkdir(parents=True, exist_ok=True)

topics = {
    1: ("Transport", "Should Cities Ban Cars from Their Centres?", "Car-free City Centres"),
    2: ("Education", "Should Homework Be Abolished in Primary Schools?", "Primary School Homework"),
    3: ("Technology", "Should Public Libraries Lend Out Tools?", "Tool Libraries"),
}
# (discussion, argument, stance, is_argument, logic, rhetoric, dialectic latent quality, text)
texts = {
    1: [
        (
            90101,
            1,
            True,
            True,
            1.6,
            1.2,
            1.4,
            "Car-free centres cut air pollution where most people walk, shop and breathe. Several cities that closed their cores to traffic measured lower nitrogen dioxide within a year, and cleaner air means fewer asthma attacks among children and the elderly.",
        ),
        (
            90101,
            2,
            False,
            True,
            0.4,
            1.3,
            0.2,
            "Imagine a nurse on a night shift who cannot drive to work any more. A ban punishes exactly the people who keep the city running, and it does so without asking them.",
        ),
        (
            90102,
            1,
            True,
            True,
            0.9,
            0.3,
            1.1,
            "Opponents say shops will lose customers, but pedestrians stop more often than drivers and spend more per month. A ban, phased in with delivery windows, can keep trade alive while streets become safer.",
        ),
        (
            90102,
            4,
            False,
            True,
            -0.6,
            -0.2,
            -0.8,
            "Cars are freedom. Taking them away is just wrong and everybody knows it.",
        ),
        (
            90103,
            2,
            True,
            True,
            0.1,
            -0.9,
            0.0,
            "Less cars means less noise. Noise is bad. So we should ban the cars from the centre i think.",
        ),
        (90103, 3, False, True, -1.2, -1.1, -1.0, "no no no. ban bikes first"),
        (
            90104,
            1,
            True,
            False,
            None,
            None,
            None,
            "Does anyone know when the next council meeting is? I could not find the date on the website.",
        ),
    ],
    2: [
        (
            90201,
            1,
            True,
            True,
            1.3,
            0.8,
            1.2,
            "Studies of young pupils find little link between homework and learning, while time for play, reading for pleasure and sleep clearly helps. Abolishing homework in primary school frees that time without lowering achievement.",
        ),
        (
            90201,
            2,
            False,
            True,
            0.7,
            1.1,
            0.9,
            "Short homework tasks give parents a window into what their children learn. Without them, many families would lose their only regular contact with the classroom, and the children who need support most would be noticed last.",
        ),
        (
            90202,
            3,
            True,
            True,
            0.2,
            0.6,
            -0.1,
            "My daughter cries over worksheets every evening. That cannot be what learning should feel like at the age of seven.",
        ),
        (
            90202,
            5,
            False,
            True,
            0.15,
            -0.8,
            0.3,
            "Homework teaches discipline. Children need to learn to do things they do not like, and school is where they learn it, so homework should stay.",
        ),
        (90203, 1, True, True, -1.0, -0.4, -1.2, "Teachers only give homework because they are lazy."),
        (90203, 2, False, False, None, None, None, "Thanks for the link, I will read it later tonight."),
    ],
    3: [
        (
            90301,
            1,
            True,
            True,
            1.1,
            0.9,
            1.0,
            "A drill is used for about thirteen minutes in its whole life. Lending tools lets a neighbourhood share a hundred drills' worth of use with a handful of them, saving money, storage space and the resources that manufacturing them costs.",
        ),
        (
            90301,
            2,
            False,
            True,
            0.5,
            0.2,
            0.8,
            "Libraries already struggle to fund books and staff. Adding tools brings insurance, repairs and safety training; unless new money comes with it, the core service will suffer.",
        ),
        (
            90302,
            1,
            True,
            True,
            0.0,
            1.0,
            -0.2,
            "Picture a student fixing her first bicycle with a borrowed wrench. That moment of competence is what public libraries were built for.",
        ),
        (
            90302,
            2,
            False,
            True,
            -0.7,
            -1.0,
            -0.5,
            "Tools are dangerous and people will hurt themselves, then sue the library.",
        ),
        (
            90303,
            4,
            True,
            True,
            -0.4,
            -0.5,
            -0.9,
            "Tools are expensive. Libraries are free. So libraries should have tools.",
        ),
        (90303, 5, False, False, None, None, None, "I bought a new hammer last week, it was on sale."),
    ],
}


def z(values):
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return [(v - mean) / sd for v in values]


# z-normalise each dimension over all argumentative texts at once (as the published scores are)
dims = {"logic": 4, "rhetoric": 5, "dialectic": 6}
arg_rows = [(t, r) for t, rows in texts.items() for r in rows if r[3]]
scores = {}
for dim, col in dims.items():
    zs = z([r[col] for _, r in arg_rows])
    for (t, r), value in zip(arg_rows, zs, strict=False):
        scores[(t, r[0], r[1], dim)] = round(value, 6)

with open(root / "full" / "webis-argquality20-topics.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["Topic ID", "Category", "Long Query", "Short Query"])
    for t, (cat, long_q, short_q) in topics.items():
        w.writerow([t, cat, long_q, short_q])

with open(root / "full" / "webis-argquality20-arguments.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(
        [
            "Topic ID",
            "Argument ID",
            "Discussion ID",
            "Premise",
            "Relevance",
            "Is Argument?",
            "Rhetorical Quality",
            "Logical Quality",
            "Dialectical Quality",
            "Text Length",
            "Stance",
            "Combined Quality",
        ]
    )
    for t, rows in texts.items():
        for d, a, stance, is_arg, lo, _rh, di, text in rows:
            if is_arg:
                s = {dim: scores[(t, d, a, dim)] for dim in dims}
                combined = round((s["logic"] + s["rhetoric"] + s["dialectic"]) / 3, 6)
                relevance = round(0.3 + 0.1 * (lo + di), 6)
            else:
                s = {dim: -4.0 for dim in dims}
                combined, relevance = -4.0, -4.0
            w.writerow(
                [
                    t,
                    a,
                    d,
                    text,
                    relevance,
                    is_arg,
                    s["rhetoric"],
                    s["logic"],
                    s["dialectic"],
                    len(text.split()),
                    stance,
                    combined,
                ]
            )

# every pair of argumentative texts of a topic, per dimension; orientation alternates with the row
for dim, name in (("logic", "logical"), ("rhetoric", "rhetorical"), ("dialectic", "dialectical")):
    with open(root / "raw" / f"webis-argquality20-raw-{name}.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Discussion ID A", "Argument ID A", "Discussion ID B", "Argument ID B", "Comparison"])
        row = 0
        for t, rows in texts.items():
            args = [r for r in rows if r[3]]
            for x, y in itertools.combinations(args, 2):
                first, second = (x, y) if row % 2 == 0 else (y, x)
                diff = scores[(t, first[0], first[1], dim)] - scores[(t, second[0], second[1], dim)]
                label = "Tie" if abs(diff) < 0.6 else ("A" if diff > 0 else "B")
                w.writerow([first[0], first[1], second[0], second[1], label])
                row += 1

# What this corpus holds, so the loader checks it against the sample's counts, not the release's.
manifest = {
    "source": "invented sample corpus (data/sample)",
    "texts": sum(len(rows) for rows in texts.values()),
    "comparisons_per_dimension": row,
}
(root / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
print("ok")
