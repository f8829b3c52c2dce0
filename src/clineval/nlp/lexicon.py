"""Small clinical word lists used for matching and for categorising facts.

These are deliberately short, hand-written lists of common terms, not a terminology:
enough to recognise the usual drugs, problems, symptoms, labs and body sites of notes and
patient questions. Everything is lower case.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(w.strip() for w in text.replace("\n", " ").split("|") if w.strip())


# --- synonyms and abbreviations ---------------------------------------------------------
# canonical form -> variants. Matching rewrites every variant to the canonical words, so
# both texts meet in one vocabulary. Short ambiguous abbreviations (PE, MS, PT as
# prothrombin time, CA, ED) are left out on purpose.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "hypertension": ("htn", "high blood pressure", "elevated blood pressure", "hypertensive"),
    "hypotension": ("low blood pressure", "hypotensive"),
    "blood_pressure": ("bp", "blood pressures", "blood pressure"),
    "heart_rate": ("pulse rate", "heart rate", "pulse", "hr"),
    "respiratory_rate": ("rr", "respiratory rate", "respiration rate"),
    "temperature": ("temp", "tmax", "t max"),
    "oxygen_saturation": (
        "spo2",
        "o2 sat",
        "o2 sats",
        "oxygen saturation",
        "sao2",
        "pulse ox",
        "pulse oximetry",
    ),
    "dyspnea": (
        "shortness of breath",
        "short of breath",
        "sob",
        "dyspnoea",
        "breathlessness",
        "breathless",
        "difficulty breathing",
        "trouble breathing",
        "breathing difficulty",
        "winded",
    ),
    "myocardial_infarction": ("myocardial infarction", "heart attack", "mi"),
    # STEMI and NSTEMI are two different diagnoses, both myocardial infarctions: each is
    # rewritten as its own term plus "myocardial_infarction", so "heart attack" is supported
    # by either and one is never taken for the other (they are a contrast set below).
    "stemi myocardial_infarction": (
        "stemi",
        "st elevation myocardial infarction",
        "st segment elevation myocardial infarction",
        "st elevation mi",
    ),
    "nstemi myocardial_infarction": (
        "nstemi",
        "non-stemi",
        "non stemi",
        "non-st elevation myocardial infarction",
        "non st elevation myocardial infarction",
        "non-st segment elevation myocardial infarction",
        "non st segment elevation myocardial infarction",
        "non-st elevation mi",
        "non st elevation mi",
    ),
    "heart_failure": (
        "congestive heart failure",
        "chf",
        "heart failure",
        "cardiac failure",
    ),
    "copd": ("chronic obstructive pulmonary disease", "emphysema"),
    "diabetes": ("diabetes mellitus", "dm", "diabetic", "diabetics"),
    "type_2_diabetes": (
        "type 2 diabetes mellitus",
        "type 2 diabetes",
        "type ii diabetes",
        "t2dm",
        "dm2",
        "dm 2",
        "dm ii",
        "niddm",
        "diabetes type 2",
        "diabetes mellitus type 2",
        "type two diabetes",
    ),
    "type_1_diabetes": (
        "type 1 diabetes mellitus",
        "type 1 diabetes",
        "type i diabetes",
        "t1dm",
        "dm1",
        "iddm",
        "diabetes type 1",
        "diabetes mellitus type 1",
        "type one diabetes",
    ),
    "coronary_artery_disease": (
        "coronary artery disease",
        "cad",
        "coronary heart disease",
        "ischemic heart disease",
    ),
    "atrial_fibrillation": ("atrial fibrillation", "afib", "a-fib", "a fib"),
    "chronic_kidney_disease": (
        "chronic kidney disease",
        "ckd",
        "chronic renal disease",
        "chronic renal insufficiency",
    ),
    "end_stage_renal_disease": ("end stage renal disease", "end-stage renal disease", "esrd"),
    "acute_kidney_injury": ("acute kidney injury", "aki", "acute renal failure"),
    "gerd": (
        "gastroesophageal reflux disease",
        "gastroesophageal reflux",
        "acid reflux",
        "reflux disease",
        "heartburn",
    ),
    "urinary_tract_infection": ("urinary tract infection", "uti", "bladder infection"),
    "upper_respiratory_infection": (
        "upper respiratory infection",
        "upper respiratory tract infection",
        "uri",
        "common cold",
        "head cold",
    ),
    "deep_vein_thrombosis": ("deep vein thrombosis", "deep venous thrombosis", "dvt"),
    "pulmonary_embolism": ("pulmonary embolism", "pulmonary embolus"),
    "stroke": ("cerebrovascular accident", "cva", "brain attack"),
    "transient_ischemic_attack": ("transient ischemic attack", "tia", "mini stroke", "mini-stroke"),
    "obstructive_sleep_apnea": ("obstructive sleep apnea", "osa", "sleep apnea"),
    "benign_prostatic_hyperplasia": (
        "benign prostatic hyperplasia",
        "benign prostatic hypertrophy",
        "bph",
        "enlarged prostate",
    ),
    "osteoarthritis": ("oa", "degenerative joint disease", "djd"),
    "rheumatoid_arthritis": ("rheumatoid arthritis",),
    "hyperlipidemia": (
        "hld",
        "high cholesterol",
        "dyslipidemia",
        "hypercholesterolemia",
        "elevated cholesterol",
    ),
    "hypothyroidism": ("underactive thyroid", "low thyroid"),
    "hyperthyroidism": ("overactive thyroid",),
    "irritable_bowel_syndrome": ("irritable bowel syndrome", "ibs"),
    "inflammatory_bowel_disease": ("inflammatory bowel disease", "ibd"),
    "human_immunodeficiency_virus": ("human immunodeficiency virus", "hiv"),
    "covid": ("covid-19", "covid 19", "coronavirus", "sars-cov-2", "sars cov 2"),
    "coronary_bypass": ("coronary artery bypass graft", "coronary artery bypass", "cabg", "bypass surgery"),
    "percutaneous_coronary_intervention": ("percutaneous coronary intervention", "pci", "coronary stent"),
    "computed_tomography": ("ct scan", "cat scan", "ct", "computed tomography"),
    "magnetic_resonance": ("mri", "magnetic resonance imaging", "mr imaging"),
    "xray": ("x-ray", "x ray", "xr", "radiograph", "radiography", "cxr", "chest film"),
    "ultrasound": ("sonogram", "sonography", "ultrasonography"),
    "electrocardiogram": ("ekg", "ecg"),
    "echocardiogram": ("echo", "tte", "tee", "echocardiography"),
    "hemoglobin_a1c": (
        "hemoglobin a1c",
        "haemoglobin a1c",
        "hba1c",
        "hgba1c",
        "a1c",
        "glycated hemoglobin",
        "glycosylated hemoglobin",
    ),
    "glucose": (
        "blood sugar",
        "blood sugars",
        "sugar levels",
        "sugar level",
        "blood glucose",
        "bg",
        "sugars",
    ),
    "white_blood_cell": (
        "white blood cell count",
        "white blood cells",
        "white blood cell",
        "wbc",
        "white count",
        "leukocyte count",
    ),
    "ldl": ("low density lipoprotein", "ldl cholesterol", "ldl-c"),
    "hdl": ("high density lipoprotein", "hdl cholesterol", "hdl-c"),
    "ejection_fraction": ("ejection fraction", "ef", "lvef"),
    "tsh": ("thyroid stimulating hormone", "thyroid-stimulating hormone"),
    "inr": ("international normalized ratio",),
    "bnp": ("b-type natriuretic peptide", "brain natriuretic peptide", "nt-probnp", "probnp"),
    "psa": ("prostate specific antigen", "prostate-specific antigen"),
    "egfr_rate": ("estimated glomerular filtration rate", "glomerular filtration rate", "gfr", "egfr rate"),
    "npo": ("nothing by mouth", "nil by mouth", "nil per os", "nothing per os"),
    "po": ("by mouth", "per os", "orally"),
    "iv": ("intravenous", "intravenously", "i.v."),
    "im": ("intramuscular", "intramuscularly", "i.m."),
    "subcutaneous": ("subq", "sq", "sc", "s.c.", "subcutaneously", "sub-q", "under the skin"),
    "prn": ("as needed", "as-needed", "when needed", "p.r.n."),
    "once_daily": (
        "qd",
        "q.d.",
        "daily",
        "once daily",
        "once a day",
        "every day",
        "once per day",
        "each day",
        "per day",
        "a day",
        "qday",
        "every 24 hours",
        "q24h",
        "q24",
    ),
    "twice_daily": (
        "bid",
        "b.i.d.",
        "twice daily",
        "twice a day",
        "two times a day",
        "2 times a day",
        "two times daily",
        "2 times daily",
        "every 12 hours",
        "q12h",
        "q12",
    ),
    "three_times_daily": (
        "tid",
        "t.i.d.",
        "three times daily",
        "three times a day",
        "3 times a day",
        "3 times daily",
        "every 8 hours",
        "q8h",
        "q8",
    ),
    "four_times_daily": (
        "qid",
        "q.i.d.",
        "four times daily",
        "four times a day",
        "4 times a day",
        "4 times daily",
        "every 6 hours",
        "q6h",
        "q6",
    ),
    "six_times_daily": ("every 4 hours", "q4h", "q4"),
    "eight_times_daily": ("every 3 hours", "q3h"),
    "twelve_times_daily": ("every 2 hours", "q2h"),
    "nightly": ("qhs", "q.h.s.", "at bedtime", "every night", "before bed"),
    "weekly": ("once weekly", "once a week", "every week", "per week", "qweek", "qwk"),
    "history": ("h/o", "hx", "history of", "pmh", "past medical history", "medical history"),
    "status_post": ("s/p", "status post"),
    # Shorthand of notes the clinical vocabularies (diseases, findings, drugs, anatomy) lack:
    # procedures, tests, therapies and scales. HFrEF and HFpEF are two diagnoses, not one.
    "heart_failure_with_reduced_ejection_fraction": (
        "hfref",
        "heart failure with reduced ejection fraction",
        "heart failure with reduced ef",
        "systolic heart failure",
    ),
    "heart_failure_with_preserved_ejection_fraction": (
        "hfpef",
        "heart failure with preserved ejection fraction",
        "heart failure with preserved ef",
        "diastolic heart failure",
    ),
    "cognitive_behavioral_therapy": (
        "cbt",
        "cognitive behavioral therapy",
        "cognitive behavioural therapy",
        "cognitive-behavioral therapy",
        "cognitive behavior therapy",
        "cognitive behaviour therapy",
    ),
    "dialectical_behavior_therapy": ("dbt", "dialectical behavior therapy", "dialectical behaviour therapy"),
    "proton_pump_inhibitor": ("ppi", "ppis", "proton pump inhibitors", "proton pump inhibitor"),
    "ecog_performance_status": (
        "ecog",
        "ecog ps",
        "ecog performance status",
        "eastern cooperative oncology group performance status",
        "eastern cooperative oncology group",
    ),
    "karnofsky_performance_status": ("kps", "karnofsky performance status", "karnofsky score", "karnofsky"),
    "nyha_class": (
        "nyha",
        "nyha class",
        "nyha functional class",
        "new york heart association class",
        "new york heart association functional class",
        "new york heart association",
    ),
    "total_parenteral_nutrition": ("tpn", "total parenteral nutrition", "parenteral nutrition"),
    "electroencephalogram": ("eeg", "electroencephalography", "electroencephalogram"),
    "electromyography": ("emg", "electromyogram", "nerve conduction and emg"),
    "pulmonary_function_tests": ("pft", "pfts", "pulmonary function test", "pulmonary function tests"),
    "arterial_blood_gas": ("abg", "abgs", "arterial blood gas", "arterial blood gases"),
    "complete_blood_count": ("cbc", "complete blood count", "full blood count", "fbc"),
    "comprehensive_metabolic_panel": ("cmp", "comprehensive metabolic panel"),
    "basic_metabolic_panel": ("bmp", "basic metabolic panel"),
    "liver_function_tests": ("lft", "lfts", "liver function test", "liver function tests", "liver enzymes"),
    "low_molecular_weight_heparin": ("lmwh", "low molecular weight heparin", "low-molecular-weight heparin"),
    "total_knee_arthroplasty": ("tka", "total knee arthroplasty", "total knee replacement", "tkr"),
    "total_hip_arthroplasty": ("tha", "total hip arthroplasty", "total hip replacement", "thr"),
    "open_reduction_internal_fixation": (
        "orif",
        "open reduction and internal fixation",
        "open reduction internal fixation",
    ),
    "upper_endoscopy": ("egd", "esophagogastroduodenoscopy", "upper endoscopy", "upper gi endoscopy"),
    # "status X" names a diagnosis of its own (a prolonged, dangerous form), not X.
    "status_epilepticus": ("status epilepticus",),
    "status_asthmaticus": ("status asthmaticus",),
    "status_migrainosus": ("status migrainosus",),
    # One drug class, three names.
    "antiepileptic": (
        "antiepileptics",
        "anti-epileptic",
        "anti-epileptics",
        "anticonvulsant",
        "anticonvulsants",
        "anti-convulsant",
        "anti-convulsants",
        "antiseizure",
        "anti-seizure",
    ),
    "patient": ("pt", "pts", "patients", "patient's"),
    "emergency_department": ("emergency department", "emergency room"),
    "primary_care": (
        "primary care physician",
        "primary care provider",
        "pcp",
        "family doctor",
        "gp",
        "general practitioner",
    ),
    "physical_therapy": ("physical therapy", "physiotherapy", "physio"),
    "nsaid": (
        "nsaids",
        "non-steroidal anti-inflammatory",
        "nonsteroidal anti-inflammatory",
        "anti-inflammatory drugs",
        "anti-inflammatories",
        "anti-inflammatory medication",
    ),
    "ssri": ("ssris", "selective serotonin reuptake inhibitors", "selective serotonin reuptake inhibitor"),
    "snri": (
        "snris",
        "serotonin norepinephrine reuptake inhibitors",
        "serotonin-norepinephrine reuptake inhibitor",
    ),
    "ace_inhibitor": ("ace inhibitor", "ace inhibitors", "ace-inhibitor", "acei", "ace-i"),
    "angiotensin_receptor_blocker": (
        "angiotensin receptor blocker",
        "angiotensin receptor blockers",
        "angiotensin ii receptor blocker",
        "arb",
        "arbs",
    ),
    "beta_blocker": ("beta blocker", "beta blockers", "beta-blocker", "beta-blockers", "b-blocker"),
    "calcium_channel_blocker": ("calcium channel blocker", "calcium channel blockers", "ccb"),
    "anticoagulant": ("blood thinner", "blood thinners", "anticoagulants", "anticoagulation", "doac", "noac"),
    "antibiotic": ("antibiotics", "antibacterial", "antimicrobial", "abx"),
    "steroid": ("steroids", "corticosteroid", "corticosteroids", "glucocorticoid"),
    "vomiting": ("emesis", "throwing up", "threw up", "vomited", "vomit"),
    "diarrhea": ("diarrhoea", "loose stools", "loose stool", "watery stools"),
    "fever": ("febrile", "fevers", "pyrexia", "elevated temperature"),
    "no fever": ("afebrile",),
    # examination findings written as one negative adjective
    "no focal deficit": ("nonfocal", "non focal"),
    "no tenderness": ("nontender", "non tender", "not tender"),
    "no distension": ("nondistended", "non distended", "not distended"),
    # "-less" and "-free" deny: "a painless lump" is a lump without pain.
    "no pain": ("painless",),
    "allergy": ("allergies", "allergic"),
    "family history": ("fhx", "family hx", "fmhx"),
    "first_line": ("first-line", "first line", "first-choice", "first choice"),
    "second_line": ("second-line", "second line"),
    "no known drug allergies": ("nkda", "nka", "no known allergies"),
    "headache": ("headaches", "cephalgia", "head pain"),
    "dizziness": ("dizzy", "lightheaded", "light-headed", "lightheadedness", "vertigo"),
    "fatigue": (
        "tired",
        "tiredness",
        "fatigued",
        "exhausted",
        "exhaustion",
        "lethargy",
        "lethargic",
        "malaise",
    ),
    "nausea": ("nauseous", "nauseated", "queasy"),
    "edema": ("oedema", "swelling", "swollen"),
    "pruritus": ("itching", "itchy", "itch", "itches", "itched"),
    "syncope": ("fainting", "fainted", "passed out", "loss of consciousness", "blackout"),
    "palpitations": ("heart racing", "racing heart", "heart pounding", "fluttering"),
    "chest_pain": ("chest pain", "chest discomfort", "chest pressure", "chest tightness", "angina"),
    "abdominal_pain": (
        "abdominal pain",
        "belly pain",
        "stomach pain",
        "stomach ache",
        "stomachache",
        "tummy pain",
    ),
    "back_pain": ("back pain", "backache"),
    "cough": ("coughing", "coughs", "coughed"),
    "pregnancy": ("pregnant", "expecting a baby", "gestation"),
    "weight_loss": ("weight loss", "lost weight", "losing weight"),
    "weight_gain": ("weight gain", "gained weight", "gaining weight"),
    "kidney": ("renal", "kidneys"),
    "liver": ("hepatic",),
    "lung": ("pulmonary", "lungs", "lung fields", "lung parenchyma", "pulmonary parenchyma"),
    "heart": (
        "cardiac",
        "cardiac silhouette",
        "heart silhouette",
        "cardiac shadow",
        "heart shadow",
        "cardiac contour",
        "cardiac contours",
    ),
    "heart_mediastinum": (
        "cardiomediastinal silhouette",
        "cardiomediastinal contour",
        "cardiomediastinal contours",
        "cardiomediastinal",
        "mediastinal and cardiac silhouettes",
    ),
    "mediastinum": (
        "mediastinal",
        "mediastinal structures",
        "mediastinal contours",
        "mediastinal silhouette",
    ),
    "normal": (
        "within normal limits",
        "wnl",
        "unremarkable",
        "grossly normal",
        "grossly unremarkable",
        "clear to auscultation",
        "clear to auscultation bilaterally",
        "within normal range",
        "in the normal range",
    ),
    "cardiomegaly": (
        "enlarged heart",
        "cardiac enlargement",
        "enlargement of the heart",
        "enlarged cardiac silhouette",
    ),
    "opacity": ("opacities", "opacification", "opacifications"),
    "infiltrate": ("infiltrates", "infiltration", "infiltrations"),
    "stomach": ("gastric",),
    "skin": ("dermal", "cutaneous"),
    "cancer": ("malignancy", "malignant neoplasm", "carcinoma", "cancers"),
    "metastasis": ("metastases", "metastatic", "mets"),
    "pneumonia": ("pna",),
    "pneumothorax": ("ptx",),
    "fracture": ("fx", "broken bone", "fractures", "fractured"),
    "surgery": ("operation", "surgical", "operative", "surgeries"),
    "medication": ("medications", "medicine", "medicines", "meds", "drug", "drugs", "pill", "pills"),
    "physician": (
        "doctor",
        "doctors",
        "physicians",
        "provider",
        "providers",
        "clinician",
        "md",
        "healthcare provider",
        "health care provider",
        "healthcare professional",
        "health care professional",
        "medical professional",
        "healthcare practitioner",
    ),
    "follow_up": (
        "follow up",
        "follow-up",
        "followup",
        "f/u",
        "come back",
        "return visit",
        "see him back",
        "see her back",
        "see you back",
    ),
    "aspirin": ("asa", "acetylsalicylic acid"),
    "warfarin": ("coumadin", "jantoven"),
    "levothyroxine": ("synthroid", "levoxyl", "euthyrox"),
    "dimenhydrinate": ("dramamine", "gravol"),
    # more brand names of common prescription and over-the-counter drugs
    "benzocaine": ("orajel", "anbesol"),
    "bismuth_subsalicylate": ("pepto-bismol", "pepto bismol", "pepto", "kaopectate"),
    "docusate": ("colace",),
    "polyethylene_glycol": ("miralax",),
    "senna": ("senokot", "sennosides"),
    "hydrocortisone": ("cortizone", "cortaid"),
    "calcium_carbonate": ("tums",),
    "simethicone": ("gas-x",),
    "diclofenac": ("voltaren", "cataflam"),
    "propranolol": ("inderal",),
    "isosorbide": ("imdur", "isordil"),
    "estradiol": ("estrace",),
    "medroxyprogesterone": ("depo-provera", "provera"),
    "hyoscyamine": ("levsin",),
    "scopolamine": ("transderm scop",),
    "cephalexin": ("keflex",),
    "amoxicillin_clavulanate": ("augmentin", "amoxicillin-clavulanate", "amoxicillin clavulanate"),
    "azithromycin": ("zithromax", "z-pack", "z-pak", "zpack"),
    "trimethoprim_sulfamethoxazole": ("bactrim", "septra", "tmp-smx", "trimethoprim-sulfamethoxazole"),
    "insulin_glargine": ("lantus", "basaglar", "toujeo", "insulin glargine"),
    "insulin_lispro": ("humalog", "insulin lispro"),
    "valproate": ("depakote", "valproic acid", "divalproex"),
    "oxycodone": ("oxycontin", "percocet", "roxicodone"),
    "hydrocodone": ("vicodin", "norco"),
    "nitroglycerin": ("nitro", "ntg", "nitrostat"),
    "methotrexate": ("trexall", "otrexup"),
    # everyday wording of the social and family history
    "alone": (
        "by herself",
        "by himself",
        "by themselves",
        "by myself",
        "by oneself",
        "on her own",
        "on his own",
        "on their own",
        "on my own",
    ),
    "apartment": (
        "a flat",
        "her flat",
        "his flat",
        "their flat",
        "my flat",
        "council flat",
        "condo",
        "condominium",
    ),
    "father": ("dad", "daddy"),
    "mother": ("mom", "mum", "mommy", "mummy"),
    # everyday words for common symptoms, signs and conditions (lay <-> clinical)
    "myalgia": (
        "myalgias",
        "muscle aches",
        "muscle ache",
        "muscle pain",
        "muscle pains",
        "body aches",
        "body ache",
        "achy muscles",
        "sore muscles",
    ),
    "arthralgia": ("arthralgias", "joint pain", "joint pains", "joint aches", "achy joints"),
    "rhinorrhea": ("rhinorrhoea", "runny nose", "running nose"),
    "nasal_congestion": ("nasal congestion", "stuffy nose", "blocked nose", "stuffed up nose"),
    "streptococcal_pharyngitis": ("strep throat", "streptococcal pharyngitis", "strep pharyngitis"),
    "sore_throat": ("sore throat", "throat pain", "pharyngitis"),
    "dysphagia": (
        "difficulty swallowing",
        "trouble swallowing",
        "swallowing difficulty",
        "difficulty in swallowing",
    ),
    "odynophagia": (
        "painful swallowing",
        "pain on swallowing",
        "pain with swallowing",
        "pain when swallowing",
    ),
    "dysuria": (
        "painful urination",
        "pain with urination",
        "pain on urination",
        "burning urination",
        "burning on urination",
        "burning with urination",
        "burning when urinating",
    ),
    "urinary_frequency": (
        "urinary frequency",
        "frequent urination",
        "urinating frequently",
        "urinate frequently",
        "urinating often",
    ),
    "polydipsia": ("excessive thirst", "increased thirst", "extreme thirst", "excess thirst"),
    "polyphagia": ("excessive hunger", "increased hunger", "extreme hunger", "excess hunger"),
    "insomnia": (
        "trouble sleeping",
        "difficulty sleeping",
        "sleeplessness",
        "difficulty falling asleep",
        "trouble falling asleep",
        "unable to sleep",
    ),
    "hematuria": ("haematuria", "blood in the urine", "blood in urine", "bloody urine"),
    "hematochezia": (
        "haematochezia",
        "blood in the stool",
        "blood in the stools",
        "blood in stool",
        "blood in stools",
        "bloody stool",
        "bloody stools",
    ),
    "melena": ("melaena", "black tarry stools", "tarry stools", "black stools", "black stool"),
    "hemoptysis": ("haemoptysis", "coughing up blood", "coughed up blood", "coughs up blood"),
    "epistaxis": ("nosebleed", "nosebleeds", "nose bleed", "nose bleeds", "bloody nose"),
    "dyspepsia": ("indigestion", "upset stomach"),
    "tinnitus": ("ringing in the ears", "ringing in the ear", "ringing in ears", "ear ringing"),
    "alopecia": ("hair loss", "losing hair"),
    "urticaria": ("hives",),
    "xerostomia": ("dry mouth",),
    "diaphoresis": ("sweating", "sweats", "sweaty", "diaphoretic"),
    "anosmia": ("loss of smell", "loss of the sense of smell", "lost sense of smell"),
    "ageusia": ("loss of taste", "loss of the sense of taste", "lost sense of taste"),
    "paresthesia": ("paresthesias", "paraesthesia", "paraesthesias", "tingling", "pins and needles"),
    "erythema": ("redness", "erythematous"),
    "appetite_loss": (
        "loss of appetite",
        "decreased appetite",
        "poor appetite",
        "reduced appetite",
        "lack of appetite",
    ),
    "hyperglycemia": (
        "hyperglycaemia",
        "high blood sugar",
        "high blood glucose",
        "elevated blood sugar",
        "elevated blood glucose",
    ),
    "hypoglycemia": ("hypoglycaemia", "low blood sugar", "low blood glucose"),
    "hemorrhoids": ("haemorrhoids", "hemorrhoid", "haemorrhoid", "piles"),
    "varicella": ("chickenpox", "chicken pox"),
    "herpes_zoster": ("herpes zoster", "shingles", "zoster"),
    "pertussis": ("whooping cough",),
    "gastroenteritis": ("stomach flu", "stomach bug", "viral gastroenteritis"),
    "influenza": ("flu",),
    # Viruses named in letters: "hepatitis B" and "hepatitis C" are two organisms, not
    # "hepatitis" (the single letter is no content word).
    "hepatitis_b": ("hepatitis b", "hep b", "hbv", "hepatitis b virus"),
    "hepatitis_c": ("hepatitis c", "hep c", "hcv", "hepatitis c virus"),
    "hepatitis_a": ("hepatitis a", "hep a", "hav", "hepatitis a virus"),
    "rsv": ("respiratory syncytial virus", "rsv"),
    "otitis_media": ("otitis media", "middle ear infection", "ear infection", "ear infections"),
    "conjunctivitis": ("pink eye", "pinkeye"),
    "nephrolithiasis": ("kidney stone", "kidney stones", "renal calculi", "renal calculus", "renal stones"),
    "cholelithiasis": ("gallstone", "gallstones", "gall stones"),
    "fatty_liver": (
        "fatty liver",
        "fatty liver disease",
        "hepatic steatosis",
        "nafld",
        "non-alcoholic fatty liver disease",
        "nonalcoholic fatty liver disease",
    ),
    "first_degree": ("first degree", "first-degree", "1st degree", "1st-degree"),
    "second_degree": ("second degree", "second-degree", "2nd degree", "2nd-degree"),
    "third_degree": ("third degree", "third-degree", "3rd degree", "3rd-degree"),
    "fourth_degree": ("fourth degree", "fourth-degree", "4th degree", "4th-degree"),
    "not safe": ("unsafe",),
    "atrial_flutter": ("atrial flutter", "a-flutter", "aflutter"),
    "supraventricular_tachycardia": ("supraventricular tachycardia", "svt"),
    "ventricular_tachycardia": ("ventricular tachycardia", "v-tach", "vtach"),
    "crohn_disease": ("crohn's disease", "crohn disease", "crohns disease", "crohn's", "crohn"),
    "ulcerative_colitis": ("ulcerative colitis",),
    "without_food": ("on an empty stomach", "empty stomach", "without food", "without a meal"),
    "with_food": ("with food", "with meals", "with a meal", "with breakfast", "with food or milk"),
    # clinical-note shorthand
    "nausea and vomiting": ("n/v", "n&v", "n+v"),
    "basal_cell_carcinoma": ("basal cell carcinoma", "bcc"),
    "squamous_cell_carcinoma": ("squamous cell carcinoma", "scc"),
    "diabetic_ketoacidosis": ("diabetic ketoacidosis", "dka"),
    "lupus": ("sle", "systemic lupus erythematosus", "lupus erythematosus"),
    "hemoglobin": ("hgb", "haemoglobin"),
    "platelets": ("plt", "plts", "platelet count", "platelet"),
    "thrombocytopenia": ("low platelet count", "low platelets", "low platelet"),
    "hypokalemia": ("hypokalaemia", "low potassium"),
    "hyperkalemia": ("hyperkalaemia", "high potassium"),
    "penicillin": ("pcn",),
    "potassium chloride": ("kcl",),
    "ferrous sulfate": ("feso4", "ferrous sulphate"),
    "every_other_day": ("qod", "every other day", "alternate days"),
    "diagnosis": ("dx",),
    "symptoms": ("sx",),
    "biopsy": ("bx",),
    "blood culture": ("bcx",),
    "urine culture": ("ucx",),
    "complains of": ("c/o",),
    "consistent with": ("c/w",),
    "cholecystectomy": ("chole",),
    "weight": ("wt",),
    "leg": ("lower extremity", "lower extremities", "lower limb", "lower limbs"),
    "negative": ("nonreactive", "non-reactive"),
    "sulfonamide": ("sulfonamides", "sulfa", "sulfa drugs", "sulphonamide", "sulphonamides", "sulpha"),
    "before surgery": ("pre-op", "preop", "preoperatively", "pre-operatively", "before the operation"),
    "after surgery": ("post-op", "postop", "postoperatively", "post-operatively", "after the operation"),
    "e_coli": ("e. coli", "e.coli", "e coli", "escherichia coli"),
    "oral_candidiasis": ("oral candidiasis", "oral thrush", "thrush"),
    "candidiasis": ("yeast infection", "yeast infections", "candida infection"),
    "dry_cough": ("dry cough", "nonproductive cough", "unproductive cough"),
    "productive_cough": ("productive cough", "wet cough", "cough with phlegm", "cough with sputum"),
    "smoking_cessation": (
        "smoking cessation",
        "quit smoking",
        "quitting smoking",
        "stop smoking",
        "stopping smoking",
    ),
    "gastrointestinal_tract": ("gastrointestinal tract", "digestive tract", "digestive system", "gi tract"),
    "gastrointestinal": ("digestive",),
    "jugular_venous_distension": (
        "jugular venous distension",
        "jugular venous distention",
        "jugular vein distension",
        "jugular vein distention",
        "jvd",
        "neck vein distension",
        "neck vein distention",
        "distended neck veins",
    ),
    "drowsiness": (
        "sleepiness",
        "drowsy",
        "sleepy",
        "somnolence",
        "somnolent",
        "sedation",
        "sedated",
        "sedating",
    ),
}

# Abbreviations spelled out for the embedding model (which does not know most of them).
ABBREVIATIONS = _words(
    "a-fib|a1c|acei|ace-i|afib|aki|apap|arb|arbs|asa|b.i.d.|bid|bnp|bp|bph|cabg|cad|ccb|chf|ckd|copd|cva|cxr"
    "|dm|dm1|dm2|doac|dvt|ecg|ekg|esrd|f/u|fx|gerd|gfr|h/o|hba1c|hctz|hfpef|hfref|hld|htn|hx|ibd|ibs|iddm"
    "|lvef|mi|niddm|nkda|npo|nsaid|nsaids|ntg|osa|p.r.n.|pci|pcp|pmh|pna|po|prn|pt|ptx|q.d.|q.h.s.|q.i.d."
    "|q12h|q6h|q8h|qd|qhs|qid|rr|s/p|sao2|snri|snris|sob|spo2|ssri|ssris|stemi|subq|t.i.d.|t1dm|t2dm|tia"
    "|tid|tsh|tte|uri|uti|wbc|inr|psa|ldl|hdl|jvd"
)

# --- drugs: generic name -> role group ---------------------------------------------------
# The role groups are coarse (what a drug is for), used to tell when two texts name
# different drugs for the same job.
_DRUG_ROLES: dict[str, str] = {
    "norepinephrine|noradrenaline|vasopressin|phenylephrine|dopamine": "vasopressor",
    # blood pressure / heart
    "lisinopril|enalapril|ramipril|benazepril|captopril|quinapril|fosinopril|perindopril": "antihypertensive",
    "losartan|valsartan|irbesartan|olmesartan|candesartan|telmisartan|sacubitril": "antihypertensive",
    "amlodipine|nifedipine|diltiazem|verapamil|felodipine": "antihypertensive",
    "metoprolol|atenolol|carvedilol|propranolol|bisoprolol|labetalol|nebivolol": "antihypertensive",
    "hydrochlorothiazide|chlorthalidone|indapamide": "antihypertensive",
    "clonidine|hydralazine|doxazosin|terazosin": "antihypertensive",
    "furosemide|bumetanide|torsemide|spironolactone|eplerenone": "diuretic",
    "atorvastatin|simvastatin|rosuvastatin|pravastatin|lovastatin|pitavastatin|ezetimibe": "lipid",
    "warfarin|apixaban|rivaroxaban|dabigatran|edoxaban|heparin|enoxaparin|fondaparinux": "anticoagulant",
    "aspirin|clopidogrel|ticagrelor|prasugrel": "antiplatelet",
    "digoxin|amiodarone|sotalol|flecainide|dofetilide": "antiarrhythmic",
    "nitroglycerin|isosorbide": "antianginal",
    # diabetes / endocrine
    "metformin|glipizide|glyburide|glimepiride": "antidiabetic",
    "sitagliptin|linagliptin|saxagliptin|pioglitazone": "antidiabetic",
    "empagliflozin|dapagliflozin|canagliflozin|semaglutide": "antidiabetic",
    "liraglutide|dulaglutide|tirzepatide|exenatide": "antidiabetic",
    "insulin|insulin_glargine|insulin_lispro|insulin_aspart|insulin_detemir|nph": "antidiabetic",
    "levothyroxine|liothyronine|methimazole|propylthiouracil": "thyroid",
    # pain / inflammation
    "acetaminophen|ibuprofen|naproxen|celecoxib|diclofenac|meloxicam|ketorolac|indomethacin": "analgesic",
    "tramadol|oxycodone|hydrocodone|morphine": "opioid",
    "hydromorphone|fentanyl|codeine|methadone|buprenorphine": "opioid",
    "prednisone|prednisolone|methylprednisolone|dexamethasone|hydrocortisone|budesonide": "steroid",
    "gabapentin|pregabalin|duloxetine_pain": "neuropathic",
    "cyclobenzaprine|methocarbamol|tizanidine|baclofen": "muscle_relaxant",
    "allopurinol|febuxostat|colchicine": "gout",
    "methotrexate|hydroxychloroquine|sulfasalazine|leflunomide|adalimumab|etanercept|infliximab": "dmard",
    # infection
    "amoxicillin|amoxicillin_clavulanate|penicillin|ampicillin": "antibiotic",
    "cephalexin|cefuroxime|ceftriaxone|cefdinir": "antibiotic",
    "azithromycin|clarithromycin|erythromycin|doxycycline|minocycline|tetracycline": "antibiotic",
    "ciprofloxacin|levofloxacin|moxifloxacin": "antibiotic",
    "trimethoprim_sulfamethoxazole|trimethoprim|nitrofurantoin|metronidazole": "antibiotic",
    "clindamycin|vancomycin|linezolid|piperacillin|meropenem|gentamicin": "antibiotic",
    "oseltamivir|acyclovir|valacyclovir|famciclovir|paxlovid|nirmatrelvir|remdesivir": "antiviral",
    "fluconazole|nystatin|terbinafine|clotrimazole|ketoconazole": "antifungal",
    # mental health / neuro
    "escitalopram|sertraline|fluoxetine|citalopram|paroxetine|fluvoxamine": "antidepressant",
    "bupropion|duloxetine|venlafaxine|desvenlafaxine": "antidepressant",
    "mirtazapine|trazodone|amitriptyline|nortriptyline": "antidepressant",
    "alprazolam|lorazepam|clonazepam|diazepam|buspirone|hydroxyzine": "anxiolytic",
    "zolpidem|eszopiclone|melatonin": "hypnotic",
    "quetiapine|olanzapine|risperidone|aripiprazole": "antipsychotic",
    "haloperidol|lithium|ziprasidone|lurasidone": "antipsychotic",
    "levetiracetam|valproate|lamotrigine|carbamazepine": "antiepileptic",
    "phenytoin|topiramate|oxcarbazepine|lacosamide": "antiepileptic",
    "sumatriptan|rizatriptan|topiramate_migraine": "migraine",
    "donepezil|memantine|rivastigmine": "dementia",
    "methylphenidate|amphetamine|lisdexamfetamine|atomoxetine": "stimulant",
    # lungs / allergy / gut
    "albuterol|levalbuterol|ipratropium|tiotropium": "respiratory",
    "salmeterol|formoterol|fluticasone|montelukast": "respiratory",
    "guaifenesin|dextromethorphan|benzonatate|pseudoephedrine": "cough_cold",
    "diphenhydramine|loratadine|cetirizine|fexofenadine|dimenhydrinate|doxylamine|meclizine": "antihistamine",
    "omeprazole|pantoprazole|esomeprazole|lansoprazole|famotidine|ranitidine|sucralfate": "acid",
    "ondansetron|metoclopramide|promethazine|prochlorperazine": "antiemetic",
    "docusate|senna|polyethylene_glycol|bisacodyl|lactulose|loperamide": "bowel",
    # other
    "tamsulosin|finasteride|oxybutynin|sildenafil|tadalafil": "urology",
    "alendronate|calcium|vitamin_d|denosumab": "bone",
    "latanoprost|timolol|brimonidine|dorzolamide": "eye",
    "isotretinoin|tretinoin": "dermatology",
    "permethrin|ivermectin|mebendazole|albendazole": "antiparasitic",
    "benzocaine|lidocaine": "anesthetic",
    "clobetasol|triamcinolone|mometasone|betamethasone": "steroid",
    "bismuth_subsalicylate|simethicone|calcium_carbonate": "acid",
    "senna|docusate_sodium": "bowel",
    "mupirocin|cefdinir|amoxicillin": "antibiotic",
    "varenicline|naltrexone": "addiction",
    "mesalamine": "dmard",
    "oxybutynin_er|tolterodine|mirabegron": "urology",
    "scopolamine|dicyclomine|hyoscyamine": "antispasmodic",
}
DRUG_ROLE: dict[str, str] = {name: role for names, role in _DRUG_ROLES.items() for name in names.split("|")}
# The pharmacological class of common drugs, so that a drug states its class ("started on
# metoprolol" states "started on a beta blocker"). The drug dictionary of the clinical
# vocabulary files drugs by chemical structure (MeSH), not by what they do.
_DRUG_CLASSES: dict[str, str] = {
    "beta_blocker": "metoprolol|atenolol|bisoprolol|carvedilol|propranolol|labetalol|nebivolol|nadolol",
    "ace_inhibitor": "lisinopril|enalapril|ramipril|captopril|benazepril|perindopril|quinapril|fosinopril",
    "angiotensin_receptor_blocker": "losartan|valsartan|irbesartan|candesartan|olmesartan|telmisartan",
    "calcium_channel_blocker": "amlodipine|nifedipine|diltiazem|verapamil|felodipine|nicardipine",
    "statin": "atorvastatin|simvastatin|rosuvastatin|pravastatin|lovastatin|pitavastatin|fluvastatin",
    "ssri": "sertraline|fluoxetine|citalopram|escitalopram|paroxetine|fluvoxamine",
    "snri": "venlafaxine|duloxetine|desvenlafaxine|levomilnacipran",
    "proton_pump_inhibitor": "omeprazole|pantoprazole|esomeprazole|lansoprazole|rabeprazole|dexlansoprazole",
    "nsaid": "ibuprofen|naproxen|diclofenac|celecoxib|meloxicam|indomethacin|ketorolac|etodolac",
    "anticoagulant": "warfarin|apixaban|rivaroxaban|dabigatran|edoxaban|heparin|enoxaparin|dalteparin",
    "benzodiazepine": "lorazepam|diazepam|alprazolam|clonazepam|midazolam|temazepam|chlordiazepoxide",
    "opioid": "morphine|oxycodone|hydromorphone|fentanyl|tramadol|codeine|hydrocodone|methadone",
    "steroid": "prednisone|prednisolone|methylprednisolone|dexamethasone|hydrocortisone|budesonide",
    "diuretic": "furosemide|bumetanide|torsemide|hydrochlorothiazide|chlorthalidone|indapamide",
}
# Substances the body makes, measured as lab values, that the drug dictionary files under the
# drug made of them ("cortisol" under hydrocortisone, "thyroxine" under levothyroxine): their
# names are never rewritten to a drug's.
ENDOGENOUS_SUBSTANCES = _words(
    "cortisol|thyroxine|triiodothyronine|t3|t4|testosterone|estradiol|oestradiol|estrogen|oestrogen"
    "|progesterone|insulin|glucagon|epinephrine|adrenaline|norepinephrine|noradrenaline|dopamine"
    "|serotonin|melatonin|aldosterone|renin|cortisone|calcitriol|calcidiol|cholecalciferol|ergocalciferol"
    "|erythropoietin|oxytocin|vasopressin|somatotropin|prolactin|histamine|heparin|bilirubin|urea"
)
DRUG_CLASS: dict[str, str] = {name: cls for cls, names in _DRUG_CLASSES.items() for name in names.split("|")}
DRUG_CLASS_WORDS = _words(
    "ssri|snri|nsaid|ace_inhibitor|angiotensin_receptor_blocker|beta_blocker|calcium_channel_blocker"
    "|anticoagulant|antibiotic|steroid|statin|insulin|diuretic|antidepressant|antihistamine|antiviral"
    "|antifungal|opioid|benzodiazepine|antipsychotic|anticonvulsant|antiepileptic|bronchodilator|inhaler"
    "|chemotherapy|immunotherapy|vaccine|vaccination|antacid|laxative|supplement|vitamin|antiemetic"
    "|antihypertensive|painkiller|analgesic|sedative|immunosuppressant|biologic|hormone|contraceptive"
    "|vasopressor|pressor|inotrope"
)
# Suffixes of drug names not in the list above (e.g. "-pril", "-sartan").
DRUG_SUFFIXES = (
    "pril",
    "sartan",
    "olol",
    "dipine",
    "statin",
    "parin",
    "xaban",
    "gatran",
    "gliptin",
    "gliflozin",
    "glutide",
    "azole",
    "prazole",
    "cillin",
    "mycin",
    "floxacin",
    "cycline",
    "cef",
    "vir",
    "mab",
    "nib",
    "oxetine",
    "triptan",
    "zepam",
    "zolam",
    "tidine",
    "setron",
    "sone",
    "olone",
    "asone",
    "lukast",
    "terol",
    "tropium",
    "thiazide",
    "semide",
    "pam",
    "pine",
    "done",
)

# --- problems, symptoms, labs ------------------------------------------------------------
DIAGNOSIS_WORDS = _words(
    "hypertension|hypotension|diabetes|type_2_diabetes|type_1_diabetes|myocardial_infarction|heart_failure|copd"
    "|asthma|coronary_artery_disease|atrial_fibrillation|chronic_kidney_disease|end_stage_renal_disease"
    "|acute_kidney_injury|gerd|urinary_tract_infection|upper_respiratory_infection|deep_vein_thrombosis"
    "|pulmonary_embolism|stroke|transient_ischemic_attack|obstructive_sleep_apnea|benign_prostatic_hyperplasia"
    "|osteoarthritis|rheumatoid_arthritis|hyperlipidemia|hypothyroidism|hyperthyroidism|irritable_bowel_syndrome"
    "|inflammatory_bowel_disease|human_immunodeficiency_virus|covid|cancer|metastasis|pneumonia|pneumothorax"
    "|fracture|infection|disease|disorder|syndrome|failure|injury|depression|anxiety|dementia|delirium|sepsis"
    "|obesity|anemia|anaemia|cirrhosis|hepatitis|pancreatitis|appendicitis|cholecystitis|diverticulitis|colitis"
    "|bronchitis|sinusitis|pharyngitis|otitis|cellulitis|dermatitis|eczema|psoriasis|arthritis|gout|lupus"
    "|osteoporosis|migraine|epilepsy|seizure|seizures|parkinson|alzheimer|neuropathy|sclerosis|glaucoma|cataract"
    "|tuberculosis|influenza|flu|strep|mononucleosis|lymphoma|leukemia|melanoma|sarcoma|adenocarcinoma|myeloma"
    "|effusion|consolidation|atelectasis|edema|embolism|thrombosis|aneurysm|stenosis|hernia|ulcer|polyp|nodule"
    "|mass|lesion|cyst|tear|sprain|strain|tendinitis|tendonitis|bursitis|concussion|hemorrhage|haemorrhage"
    "|bleed|hematoma|abscess|allergy|allergic|anaphylaxis|hypoglycemia|hyperglycemia|hyperkalemia|hypokalemia"
    "|hyponatremia|hypernatremia|dehydration|insomnia|schizophrenia|bipolar|adhd|autism|ptsd|ocd|addiction"
    "|alcoholism|neoplasm|carcinoma|tumor|stenosis|regurgitation|murmur|arrhythmia|tachycardia|bradycardia"
    "|cardiomyopathy|angina|vasculitis|thyroiditis|nephropathy|retinopathy|gastritis|esophagitis|hemorrhoids"
    "|constipation_chronic|incontinence|prolapse|endometriosis|fibroids|infertility|preeclampsia|scoliosis"
    "|radiculopathy|stenosis|spondylosis|herniation|trauma|status_epilepticus|status_asthmaticus|fatty_liver"
    "|diabetic_ketoacidosis|basal_cell_carcinoma|squamous_cell_carcinoma|thrombocytopenia|atrial_flutter|supraventricular_tachycardia|ventricular_tachycardia|crohn_disease|ulcerative_colitis"
    "|status_migrainosus"
)
DIAGNOSIS_SUFFIXES = ("itis", "osis", "emia", "aemia", "oma", "pathy", "plasia", "algia", "ectasis", "trophy")
SYMPTOM_WORDS = _words(
    "pain|ache|aches|aching|sore|soreness|tenderness|tender|fever|chills|sweats|cough|dyspnea|wheezing|wheeze"
    "|nausea|vomiting|diarrhea|constipation|fatigue|weakness|dizziness|headache|syncope|palpitations|chest_pain"
    "|abdominal_pain|back_pain|edema|rash|pruritus|numbness|tingling|burning|cramping|cramps|bloating|heartburn"
    "|bleeding|bruising|discharge|congestion|rhinorrhea|sneezing|hoarseness|stiffness|spasm|spasms|tremor"
    "|confusion|anxiety|insomnia|appetite|weight_loss|weight_gain|thirst|polyuria|dysuria|frequency|urgency"
    "|hematuria|blurred|blurry|vision|photophobia|tinnitus|hearing|phlegm|sputum|hemoptysis|orthopnea"
    "|claudication|limping|limp|instability|locking|popping|swelling|itching|malaise|symptom|symptoms"
    "|hurts|hurt|discomfort|tightness|pressure_sensation|jaundice|lump|warm|sweating"
)
BIOMARKER_WORDS = _words(
    "hemoglobin_a1c|glucose|white_blood_cell|ldl|hdl|ejection_fraction|tsh|inr|bnp|psa|egfr_rate|creatinine"
    "|bun|sodium|potassium|chloride|bicarbonate|calcium|magnesium|phosphorus|albumin|bilirubin|alt|ast|alp"
    "|lipase|amylase|troponin|lactate|ferritin|iron|b12|folate|vitamin_d|hemoglobin|hematocrit|platelet"
    "|platelets|cholesterol|triglycerides|lipid|lipids|crp|esr|d-dimer|procalcitonin|urinalysis|culture"
    "|cultures|biopsy|pathology|mutation|mutations|kras|braf|egfr|alk|ros1|her2|brca|brca1|brca2|pd-l1|pdl1"
    "|msi|tmb|er|pr|ki-67|cea|ca-125|afp|marker|markers|biomarker|level|levels|panel|count|titer|antibody"
    "|antibodies|positive|lab|labs|test|value|values|saturation|oxygen_saturation|blood_pressure|heart_rate"
    "|respiratory_rate|temperature|bmi|weight|spirometry|fev1|gene|genetic"
)
DEMOGRAPHIC_WORDS = _words(
    "year-old|years old|year old|yo|age|aged|male|female|man|woman|boy|girl|gentleman|lady|infant|child|teen"
    "|adolescent|elderly|caucasian|white|black|african|hispanic|latino|latina|asian|race|ethnicity|sex|gender"
    "|born|married|single|divorced|widowed|pregnancy"
)
TREATMENT_WORDS = _words(
    "medication|therapy|treatment|treated|treat|prescribed|prescription|dose|dosage|mg|mcg|tablet|tablets"
    "|capsule|injection|infusion|inhaler|cream|ointment|drops|surgery|resection|excision|repair|replacement"
    "|transplant|chemotherapy|radiation|radiotherapy|immunotherapy|dialysis|physical_therapy|vaccine"
    "|vaccination|vaccinations|start|started|starting|continue|continued|increase|increased|decrease|decreased"
    "|discontinue|discontinued|stop|stopped|refill|refilled|taper|administered|given|regimen|course|procedure"
    "|injection|brace|splint|cast|sling|crutches|ice|rest|elevation|stretching|exercises|diet|counseling"
    "|psychotherapy|cbt|referral|refer|referred|consult|intubated|ventilation|oxygen|stent|catheter|pacemaker"
    "|ablation|cardioversion|antibiotic|steroid|insulin|ssri|nsaid|statin|anticoagulant|ectomy|otomy|plasty"
)
ALLERGY_WORDS = _words("allergy|allergies|allergic|nkda|nka|anaphylaxis|intolerance|intolerant")
CRITICAL_FINDINGS = _words(
    "pneumothorax|fracture|hemorrhage|haemorrhage|bleed|bleeding|pulmonary_embolism|embolism|myocardial_infarction"
    "|stroke|malignancy|cancer|mass|metastasis|infection|pneumonia|sepsis|thrombosis|deep_vein_thrombosis"
    "|aneurysm|dissection|obstruction|perforation|effusion|consolidation|edema|lesion|nodule|tumor|abscess"
    "|appendicitis|ischemia|infarct|occlusion|stenosis|allergy|allergies|suicidal|ideation|chest_pain"
    "|dyspnea|syncope|seizure|fever"
)
SOCIAL_ADMIN_WORDS = _words(
    "lives|living|wife|husband|spouse|partner|children|kids|daughter|son|grandchildren|works|working|job|work"
    "|retired|occupation|employed|unemployed|school|college|hobby|hobbies|enjoys|travel|traveled|vacation"
    "|classes|gym|church|dog|cat|pet|appointment|scheduled|schedule|called|phone|insurance|paperwork|form|forms"
    "|consent|understands|agrees|agreed|questions|answered|discussed|reviewed|seen|visit|visits|today|thank"
    "|thanks|pleasure|weather|weekend|weekends|saturday|saturdays|sunday|sundays|party|parties|yard|garden"
)
BODY_SITES = _words(
    "head|scalp|face|forehead|eye|eyes|ear|ears|nose|mouth|jaw|tongue|throat|neck|shoulder|shoulders|arm|arms"
    "|elbow|elbows|forearm|wrist|wrists|hand|hands|finger|fingers|thumb|chest|breast|breasts|rib|ribs|back"
    "|spine|abdomen|belly|stomach|flank|hip|hips|groin|pelvis|buttock|leg|legs|thigh|knee|knees|calf|shin"
    "|ankle|ankles|foot|feet|heel|toe|toes|lung|lungs|kidney|kidneys|liver|heart|brain|ovary|ovaries|testicle"
    "|testis|adrenal|lobe|hemithorax|ureter|carotid|femoral|radial|ulna|tibia|fibula|femur|humerus|clavicle"
    "|scapula|patella|maxillary|frontal|temporal|parietal|occipital|upper|lower|extremity|extremities|side"
    "|atrium|ventricle|thyroid|parotid|axilla|axillary|inguinal|sacroiliac|temporomandibular|trapezius|biceps"
    "|triceps|hamstring|quadriceps|achilles|rotator|meniscus|acl|mcl|retina|cornea|tonsil|tonsils|sinus"
    "|vein|veins|artery|arteries|aorta|bladder|uterus|cervix|prostate|colon|rectum|esophagus|duodenum|pancreas"
    "|spleen|gallbladder|appendix|bowel|intestine|trachea|bronchus|larynx|pharynx|skull|pelvis|sacrum|coccyx"
)

# --- words that must match exactly ---------------------------------------------------------
# Genera (and common short names) of pathogens: a claim naming another organism than the
# evidence is wrong, however similar the sentences are.
ORGANISMS = _words(
    "escherichia|e_coli|klebsiella|pseudomonas|staphylococcus|staph|mrsa|mssa|streptococcus|strep|enterococcus"
    "|vre|neisseria|gonorrhoeae|meningitidis|haemophilus|hemophilus|moraxella|legionella|mycoplasma|chlamydia"
    "|chlamydophila|treponema|borrelia|rickettsia|ehrlichia|anaplasma|bartonella|brucella|coxiella|francisella"
    "|yersinia|salmonella|shigella|campylobacter|helicobacter|vibrio|clostridium|clostridioides|c_diff|listeria"
    "|bacillus|corynebacterium|nocardia|actinomyces|mycobacterium|proteus|serratia|enterobacter|citrobacter"
    "|acinetobacter|stenotrophomonas|bordetella|pasteurella|gardnerella|trichomonas|candida|aspergillus"
    "|cryptococcus|histoplasma|blastomyces|coccidioides|pneumocystis|mucor|rhizopus|sporothrix|malassezia"
    "|tinea|trichophyton|plasmodium|toxoplasma|giardia|entamoeba|cryptosporidium|leishmania|trypanosoma"
    "|schistosoma|strongyloides|ascaris|enterobius|taenia|echinococcus|sarcoptes|pediculus|herpesvirus|hsv"
    "|cytomegalovirus|cmv|epstein_barr|ebv|varicella|zoster|hpv|papillomavirus|hiv|hepatitis_b|hepatitis_c"
    "|hbv|hcv|hepatitis_a|influenza|rsv|rhinovirus|adenovirus|norovirus|rotavirus|enterovirus|coxsackievirus|parvovirus"
    "|measles|mumps|rubella|rabies|coronavirus|sars_cov_2|dengue|zika|ebola|poliovirus|prion|fusobacterium"
    "|bacteroides|peptostreptococcus|prevotella|porphyromonas|eikenella|kingella|cardiobacterium|aggregatibacter"
    "|capnocytophaga|leptospira|tropheryma|ureaplasma|mobiluncus|propionibacterium|cutibacterium|viridans"
)
# Infections by name: each says "infection" ("infections such as thrush" / "thrush").
INFECTIONS = _words(
    "pneumonia|cellulitis|candidiasis|oral_candidiasis|urinary_tract_infection|upper_respiratory_infection"
    "|influenza|flu|tuberculosis|abscess|sepsis|chlamydia|gonorrhea|gonorrhoea|syphilis|herpes|herpes_zoster"
    "|shingles|hiv|human_immunodeficiency_virus|covid|strep|mononucleosis|impetigo|scabies|malaria|measles"
    "|mumps|rubella|pertussis|meningitis|endocarditis|osteomyelitis|pyelonephritis|cystitis|gastroenteritis"
    "|hepatitis|otitis|sinusitis|pharyngitis|tonsillitis|bronchiolitis|conjunctivitis|trichomoniasis|thrush"
)
# Classes of pathogen: "caused by a virus" is not supported by a text that names no
# pathogen, and is contradicted by "caused by bacteria" (a contrast set below).
PATHOGEN_CLASSES = _words(
    "virus|viruses|viral|bacteria|bacterium|bacterial|fungus|fungi|fungal|parasite|parasites"
)
# Words that relate a cause to an effect. For the scope of a negation they are one
# relation: "X is not associated with Y" denies what "X can cause Y" states.
RELATION_WORDS = _words(
    "associated|association|cause|causes|caused|causing|linked|link|lead|leads|result|results|trigger|triggers"
    "|related|relate|connected"
)
# Qualifiers that exclude each other when they describe the same thing: "type 1" or
# "type 2" diabetes, "limited" or "diffuse" disease, a "benign" or "malignant" mass. A
# claim with one where the evidence has another is wrong, not a paraphrase. Each group
# lists its values with "|"; words that say the same value are joined with "/".
CONTRAST_SETS: tuple[tuple[str, ...], ...] = tuple(
    tuple(group.split("|"))
    for group in (
        "limited/localized/localised/focal|diffuse/generalized/generalised/widespread/disseminated",
        "primary|secondary|tertiary",
        "acute/hyperacute|subacute|chronic/old/remote",
        "benign|malignant",
        "minor|major",
        "mild|moderate|severe/profound",
        "small/tiny/smaller|large/massive/larger/bigger",
        "increased/elevated/raised/high/higher/increasing/rising/rose/risen/raise/raises/raising"
        "|decreased/reduced/low/lower/lowered/decreasing/diminished/fell/fallen/dropped",
        "enlarged|normal",
        # a result called normal is neither high nor low
        "normal|elevated/raised/high/increased/abnormal",
        "normal|low/decreased/reduced/abnormal",
        "positive|negative",
        "stable/unchanged|improved/improving/better|worsened/worsening/progressive/worse/grown/growing/enlarging",
        "first_line|second_line",
        "proximal|distal",
        # parts of one bone or organ ("fracture of the humeral shaft" / "neck"; "the tail of the
        # pancreas" / "the head")
        "head|neck|shaft/diaphysis|tail|base|waist|pole",
        "anterior|posterior",
        "medial|lateral",
        "superior|inferior",
        "upper|lower",
        "systolic|diastolic",
        "unilateral|bilateral",
        "complete|incomplete/partial",
        "open|closed",
        "controlled|uncontrolled",
        "obstructive|restrictive",
        "ischemic|hemorrhagic/haemorrhagic",
        "stemi|nstemi",
        "ascending|descending",
        "conductive|sensorineural",
        "congenital|acquired",
        "viral/virus/viruses|bacterial/bacteria/bacterium|fungal/fungus/fungi|parasitic/parasite/parasites",
        "resistant|sensitive/susceptible",
        "invasive|noninvasive",
        "intracapsular|extracapsular",
        "compensated|decompensated",
        "uncomplicated|complicated",
        "stable|unstable",
        "hyperthyroidism|hypothyroidism",
        "hypertension|hypotension",
        "hyperglycemia|hypoglycemia",
        "hyperkalemia|hypokalemia",
        "hypernatremia|hyponatremia",
        "hypercalcemia|hypocalcemia",
        "tachycardia|bradycardia",
        "oral/po|intravenous/iv|intramuscular/im|subcutaneous|topical|transdermal|rectal|sublingual|intranasal|inhaled",
        # what is done with a drug or a habit
        "start/started/starting/begin/begun/began/initiate/initiated/resume/resumed/restart/restarted"
        "/continue/continued/continuing/keep/kept"
        "|stop/stopped/stopping/discontinue/discontinued/hold/held/withhold/withheld/cease/ceased/quit",
        "faster/fast/quicker/rapid/speed|slower/slow/slows/slowed",
        "morning|night/nighttime/bedtime/evening/nightly",
        # the order of two events ("the rash appeared before / after starting the drug")
        "before|after",
        "with_food|without_food",
        "more/greater|less/fewer/lesser",
        "first_degree|second_degree|third_degree|fourth_degree",
        "male/man/men/boy/boys/gentleman|female/woman/women/girl/girls/lady",
    )
)

# Organs and the findings that make them abnormal, for "normal X" against a finding in X:
# "the lungs are clear" contradicts "patchy opacity in the left lower lobe", "heart size is
# normal" contradicts "cardiomegaly". Each finding belongs to an organ and a family (findings
# a radiologist would call one thing: "no infiltrate" contradicts "interstitial opacities").
ORGAN_WORDS: dict[str, str] = {
    **dict.fromkeys(("heart", "heart_mediastinum", "cardiac", "pericardial", "cardiomediastinal"), "heart"),
    **dict.fromkeys(("mediastinum", "mediastinal", "hilar", "hila", "hilum"), "mediastinum"),
    **dict.fromkeys(
        (
            "lung",
            "lungs",
            "pulmonary",
            "lobe",
            "lobes",
            "hemithorax",
            "parenchyma",
            "parenchymal",
            "lingula",
            "basilar",
            "bibasilar",
            "perihilar",
            "apical",
            "airspace",
            "alveolar",
            "interstitial",
            "chest",
        ),
        "lung",
    ),
    **dict.fromkeys(("pleural", "pleura", "costophrenic"), "pleura"),
    **dict.fromkeys(
        (
            "osseous",
            "bone",
            "bones",
            "bony",
            "skeletal",
            "spine",
            "spinal",
            "vertebral",
            "vertebra",
            "rib",
            "ribs",
            "thoracic_spine",
        ),
        "bone",
    ),
    **dict.fromkeys(("abdomen", "abdominal", "bowel"), "abdomen"),
}
FINDINGS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(
        (
            "opacity",
            "opacities",
            "infiltrate",
            "consolidation",
            "density",
            "densities",
            "pneumonia",
            "airspace_disease",
        ),
        ("lung", "airspace"),
    ),
    **dict.fromkeys(("atelectasis", "atelectatic", "collapse"), ("lung", "atelectasis")),
    **dict.fromkeys(("nodule", "nodules", "mass", "masses", "lesion", "lesions"), ("lung", "nodule")),
    **dict.fromkeys(("edema", "congestion", "vascular_congestion"), ("lung", "edema")),
    **dict.fromkeys(
        ("emphysema", "hyperinflation", "hyperinflated", "fibrosis", "scarring"), ("lung", "chronic")
    ),
    **dict.fromkeys(("crackles", "rales", "rhonchi", "wheezes", "wheezing"), ("lung", "exam")),
    **dict.fromkeys(("cardiomegaly", "enlarged", "enlargement"), ("heart", "size")),
    **dict.fromkeys(("murmur", "murmurs", "gallop", "rub"), ("heart", "exam")),
    **dict.fromkeys(("effusion", "effusions", "fluid", "thickening", "blunting"), ("pleura", "effusion")),
    **dict.fromkeys(("pneumothorax", "hydropneumothorax"), ("pleura", "pneumothorax")),
    **dict.fromkeys(("fracture", "fractures"), ("bone", "fracture")),
    **dict.fromkeys(
        (
            "spondylosis",
            "degenerative",
            "arthritis",
            "osteoarthritis",
            "osteophytes",
            "osteopenia",
            "arthropathy",
        ),
        ("bone", "degenerative"),
    ),
    **dict.fromkeys(("tenderness", "guarding", "distension", "distention"), ("abdomen", "exam")),
}
#: Words that say an organ is normal ("within normal limits" and "unremarkable" normalise to "normal").
NORMAL_WORDS = _words("normal|clear|intact|negative")
#: Findings so general that denying them says the organ is normal ("no acute abnormality").
GENERIC_ABNORMALITY = _words(
    "abnormality|abnormalities|process|disease|findings|finding|pathology|change|changes"
)

# --- generic words ------------------------------------------------------------------------
STOPWORDS = _words(
    "a|an|the|and|or|nor|but|if|then|else|of|in|on|at|to|for|from|by|with|as|into|onto|upon|about|above|below"
    "|over|under|between|through|during|since|until|up|down|out|off|again|further|once|here|there"
    "|when|where|why|how|all|any|both|each|few|most|other|some|such|only|own|same|so|than|too|very|can"
    "|will|just|should|would|could|may|might|must|shall|is|are|was|were|be|been|being|am|have|has|had|having"
    "|do|does|did|doing|done|this|that|these|those|it|its|itself|he|him|his|himself|she|her|hers|herself"
    "|they|them|their|theirs|themselves|we|us|our|ours|you|your|yours|i|me|my|mine|myself|who|whom|whose"
    "|which|what|whatever|while|also|well|still|yet|already|even|ever|really|quite|rather|somewhat|bit|lot"
    "|lots|much|many|one|ones|thing|things|something|anything|everything|nothing|someone|anyone|everyone"
    "|get|gets|got|getting|make|makes|made|go|goes|going|went|come|comes|came|let|lets|like|way|ways|etc"
    "|per|via|within|without_|s|t|d|ll|re|ve|m|o|y|x|e|g|ie|eg|vs|versus|whether|because|due|although|though"
    "|however|therefore|thus|hence|otherwise|also|overall|approximately|about|around|almost|nearly|regarding"
    "|respect|concerning|currently|current|now|recently|recent|today|yesterday|tomorrow|patient|mr|mrs|ms"
    "|dr|sir|madam|okay|ok|yes|yeah|yep|please|kind|sort|type_word|amount|number|part|time|times|day_word"
    "|important|note|noted|notes|reports|reported|report|states|stated|state|says|said|say|tell|told|tells"
    "|mentions|mentioned|describes|described|believes|believe|thinks|think|feel|feels|felt|seems|seem|appears"
    "|appear|appeared|indicates|indicate|indicated|shows|show|showed|shown|reveals|revealed|demonstrates"
    "|demonstrated|found|finds|find|significant|significantly|additionally|addition|including|includes|include"
    "|included|generally|usually|typically|often|commonly|common|certain|specific|specifically|particular"
    "|particularly|various|several|different|new|given|based|using|use|used|uses|help|helps|helped|need"
    "|needs|needed|take_word|able|unable_word|try|tried|trying|want|wants|wanted|sure|know|known|knows"
    "|seen|observed|identified|detected|visualized|visualised|evident|apparent|documented|sided"
)
LOW_WEIGHT_WORDS = _words(
    "medication|physician|history|follow_up|continue|continued|continues|start|started|starting|monitor"
    "|monitoring|monitored|recommend|recommended|recommends|plan|plans|planned|will|increase|decrease|take"
    "|takes|taking|took|treatment|therapy|test|testing|evaluation|evaluate|evaluated|assess|assessed|exam"
    "|examination|visit|present|presents|presented|presenting|complains|complaint|endorses|endorsed|denies"
    "|denied|level|levels|result|results|status|condition|conditions|problem|problems|issue|issues|doing"
    "|good|better|worse|well|normal|stable|mild|moderate|severe|small|large|left|right|bilateral|daily"
    "|order|ordered|obtain|obtained|check|checked|repeat|repeated|consider|considered|discuss|discussed"
    "|advise|advised|instruct|instructed|encourage|encouraged|return|experience|experiences|experiencing"
    "|experienced|develop|develops|developed|cause|causes|caused|risk|risks|effect|effects|side|health"
    "|healthcare|professional|care|provider|body|person|people|individual|individuals|year|years|month"
    "|months|week|weeks|day|days|hour|hours|minute|minutes|before|after|more|less"
)
NUMBER_WORDS: dict[str, str] = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "hundred": "100",
    "half": "0.5",
}

#: People who give care ("ask your doctor or pharmacist"): they name who to see, never a
#: diagnosis, drug or organism that a claim's term could have been replaced by.
CARE_ROLES = frozenset(
    (
        "doctor",
        "doctors",
        "physician",
        "physicians",
        "pharmacist",
        "pharmacists",
        "nurse",
        "nurses",
        "provider",
        "providers",
        "clinician",
        "clinicians",
        "specialist",
        "specialists",
        "surgeon",
        "surgeons",
        "therapist",
        "therapists",
        "dentist",
        "dentists",
        "practitioner",
        "practitioners",
        "professional",
        "professionals",
        "caregiver",
        "caregivers",
        "dermatologist",
        "gynecologist",
        "urologist",
        "cardiologist",
        "neurologist",
        "psychiatrist",
        "psychologist",
        "pediatrician",
        "obstetrician",
        "midwife",
        "paramedic",
    )
)
