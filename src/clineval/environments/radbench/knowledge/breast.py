"""Breast scenarios: three per modality (Mammography, MRI, Ultrasound)."""

from __future__ import annotations

from clineval.environments.radbench.knowledge import Quantity, Scenario

_A = "Breast"

_MAMMOGRAPHY: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="Mammography",
        disease="Invasive ductal carcinoma",
        part="upper outer quadrant of the left breast",
        symptom="irregular spiculated high-density mass",
        organ="left breast fibroglandular tissue",
        organ_dim="volumetric density",
        organ_quantity=Quantity(10, 55, "%", 0),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(10, 35, "mm", 0),
        indicator="BI-RADS Category",
        indicator_values=("4C", "5"),
        finding=(
            "In the {part} there is an {symptom} measuring {anomaly_quant}, with associated architectural"
            " distortion. The {organ} has an estimated volumetric density of {organ_quant}. No further"
            " suspicious masses or calcifications, and no skin or nipple retraction."
        ),
        impression="Suspicious {symptom} of {anomaly_quant} in the {part}, highly suggestive of malignancy.",
        treatment=(
            "For {indicator} {indicator_value}, perform ultrasound-guided core needle biopsy of the mass and"
            " ultrasound of the ipsilateral axilla. If invasive ductal carcinoma is confirmed, plan"
            " breast-conserving surgery or mastectomy with sentinel lymph node biopsy in a multidisciplinary"
            " meeting, with systemic therapy guided by ER, PR and HER2 status."
        ),
        age=(40, 75),
        female_share=0.99,
        histories=(
            "Mother diagnosed with breast cancer at age 52",
            "No breast imaging for the past four years",
            "Atypical ductal hyperplasia on a previous biopsy",
        ),
        complaints=(
            "Hard, painless lump in the left breast",
            "Recalled after an abnormal screening mammogram",
            "Skin dimpling in the upper outer left breast",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Mammography",
        disease="Ductal carcinoma in situ (DCIS)",
        part="upper inner quadrant of the right breast",
        symptom="fine pleomorphic microcalcifications in a segmental distribution",
        organ="right breast",
        organ_dim="volume",
        organ_quantity=Quantity(350, 1200, "cm³", 0),
        anomaly_dim="length",
        anomaly_quantity=Quantity(10, 50, "mm", 0),
        indicator="BI-RADS Category",
        indicator_values=("4B", "4C"),
        finding=(
            "Magnification views of the {part} show {symptom} extending over {anomaly_quant}, without an"
            " associated mass or architectural distortion. The {organ} has an estimated volume of"
            " {organ_quant}. No suspicious axillary lymph nodes."
        ),
        impression="Suspicious {symptom} spanning {anomaly_quant} in the {part}, concerning for DCIS.",
        treatment=(
            "For {indicator} {indicator_value} calcifications, perform stereotactic vacuum-assisted biopsy"
            " with specimen radiography. If DCIS is confirmed, offer breast-conserving surgery with margins"
            " of at least 2 mm followed by whole-breast radiotherapy, or mastectomy for extensive disease,"
            " and consider endocrine therapy for ER-positive DCIS."
        ),
        age=(40, 75),
        female_share=0.99,
        histories=(
            "Normal screening mammogram two years ago",
            "Sister treated for breast cancer at age 45",
            "Benign breast biopsy ten years ago",
        ),
        complaints=(
            "Asymptomatic, recalled from routine screening",
            "Intermittent bloody discharge from the right nipple",
            "No palpable abnormality, referred for screening recall",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Mammography",
        disease="Fibroadenoma",
        part="upper inner quadrant of the left breast",
        symptom="circumscribed oval mass with coarse popcorn-like calcifications",
        organ="left breast fibroglandular tissue",
        organ_dim="volumetric density",
        organ_quantity=Quantity(10, 55, "%", 0),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(10, 30, "mm", 0),
        indicator="BI-RADS Category",
        indicator_values=("2", "3"),
        finding=(
            "A {symptom}, measuring {anomaly_quant}, is seen in the {part}. The {organ} has an estimated"
            " volumetric density of {organ_quant}. No spiculated mass, architectural distortion or suspicious"
            " microcalcifications are identified."
        ),
        impression="Benign-appearing {symptom} ({anomaly_quant}) in the {part}, typical of fibroadenoma.",
        treatment=(
            "For {indicator} {indicator_value}, no biopsy is needed: a classic calcified involuting"
            " fibroadenoma (category 2) returns to routine annual screening, while a category 3 assessment"
            " warrants a 6-month diagnostic mammogram and follow-up for 2 years."
        ),
        age=(40, 75),
        female_share=1.0,
        histories=(
            "Left breast lump known and unchanged for over ten years",
            "Fibroadenoma diagnosed on core biopsy in her twenties",
            "No family history of breast cancer",
        ),
        complaints=(
            "Routine screening mammogram",
            "Small, mobile, painless lump in the left breast",
            "Recalled for calcifications on screening",
        ),
    ),
)

_MRI: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Invasive lobular carcinoma",
        part="upper outer quadrant of the right breast",
        symptom="irregular enhancing mass with spiculated margins and washout kinetics",
        organ="right breast fibroglandular tissue",
        organ_dim="volume",
        organ_quantity=Quantity(60, 350, "cm³", 0),
        anomaly_dim="greatest extent",
        anomaly_quantity=Quantity(20, 60, "mm", 0),
        indicator="MRI BI-RADS Category",
        indicator_values=("4C", "5"),
        finding=(
            "Dynamic contrast-enhanced MRI shows an {symptom} in the {part}, with a greatest extent of"
            " {anomaly_quant}. The {organ} volume is {organ_quant} with mild background parenchymal"
            " enhancement. The left breast and both axillae show no suspicious enhancement."
        ),
        impression="Suspicious {symptom} spanning {anomaly_quant} in the {part}, likely lobular carcinoma.",
        treatment=(
            "For {indicator} {indicator_value}, perform second-look ultrasound-guided or MRI-guided core"
            " biopsy. If invasive lobular carcinoma is confirmed, plan surgery on the MRI extent: lumpectomy"
            " with careful margin assessment or mastectomy for multicentric disease, with sentinel lymph node"
            " biopsy and endocrine therapy for the usually ER-positive tumor."
        ),
        age=(45, 75),
        female_share=0.99,
        histories=(
            "Mammographically occult asymmetry in the right breast",
            "Extremely dense breasts and a BRCA2 mutation",
            "Estimated lifetime breast cancer risk above 20%",
        ),
        complaints=(
            "Vague thickening in the right breast",
            "High-risk annual screening MRI",
            "Problem-solving MRI after an indeterminate mammogram",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Inflammatory breast cancer",
        part="skin of the left breast",
        symptom="diffuse skin thickening and enhancement",
        organ="left breast",
        organ_dim="volume",
        organ_quantity=Quantity(600, 1600, "cm³", 0),
        anomaly_dim="thickness",
        anomaly_quantity=Quantity(4.0, 12.0, "mm"),
        indicator="TNM Staging",
        indicator_values=("cT4d N1 M0", "cT4d N2 M0", "cT4d N3 M0"),
        finding=(
            "There is {symptom} involving more than one third of the {part}, with a maximal skin thickness of"
            " {anomaly_quant}, diffuse T2-hyperintense edema and underlying heterogeneous non-mass"
            " enhancement. The {organ} is enlarged, with a volume of {organ_quant}, and several ipsilateral"
            " axillary lymph nodes are enlarged."
        ),
        impression=(
            "Marked {symptom} of the {part} (up to {anomaly_quant}), consistent with inflammatory breast"
            " cancer."
        ),
        treatment=(
            "Inflammatory breast cancer staged {indicator_value} ({indicator}) requires systemic staging with"
            " CT or PET-CT and trimodality therapy: neoadjuvant chemotherapy (with HER2-directed therapy if"
            " HER2-positive), modified radical mastectomy with axillary dissection, then post-mastectomy"
            " radiotherapy. Skin-sparing mastectomy, immediate reconstruction and sentinel node biopsy are"
            " not recommended."
        ),
        age=(35, 70),
        female_share=0.99,
        histories=(
            "Two courses of antibiotics for presumed mastitis without improvement",
            "No previous breast disease",
            "Grandmother diagnosed with breast cancer",
        ),
        complaints=(
            "Rapidly progressive redness and swelling of the left breast",
            "Peau d'orange skin over the left breast",
            "Warm, heavy and tender left breast",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Paget's disease of the breast",
        part="right nipple-areolar complex",
        symptom="asymmetric nipple-areolar thickening and enhancement",
        organ="right breast",
        organ_dim="volume",
        organ_quantity=Quantity(350, 1200, "cm³", 0),
        anomaly_dim="thickness",
        anomaly_quantity=Quantity(3.0, 9.0, "mm"),
        indicator="MRI BI-RADS Category",
        indicator_values=("4B", "4C", "5"),
        finding=(
            "There is {symptom} of the {part}, measuring {anomaly_quant} in thickness, greater than the"
            " contralateral side. Clumped linear non-mass enhancement extends posteriorly from the nipple"
            " along the retroareolar ducts. The {organ} volume is {organ_quant}; no axillary adenopathy."
        ),
        impression=(
            "Suspicious {symptom} of the {part} with ductal non-mass enhancement, suggesting Paget's disease"
            " with underlying DCIS."
        ),
        treatment=(
            "For {indicator} {indicator_value}, obtain a punch or wedge biopsy of the nipple and MRI-guided"
            " biopsy of the retroareolar enhancement. Confirmed Paget's disease is treated by central"
            " lumpectomy including the nipple-areolar complex with whole-breast radiotherapy, or mastectomy"
            " if extensive, adding sentinel node biopsy when an invasive component is present."
        ),
        age=(45, 75),
        female_share=0.99,
        histories=(
            "Nipple rash treated with topical steroids for three months",
            "Normal screening mammogram last year",
            "No history of eczema or psoriasis",
        ),
        complaints=(
            "Scaly, itchy rash of the right nipple",
            "Crusting and bleeding from the right nipple",
            "Burning discomfort and flattening of the right nipple",
        ),
    ),
)

_ULTRASOUND: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Simple cyst",
        part="2 o'clock position of the left breast",
        symptom="circumscribed oval anechoic cyst with posterior acoustic enhancement",
        organ="left breast fibroglandular tissue",
        organ_dim="thickness",
        organ_quantity=Quantity(8, 25, "mm", 0),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(8, 35, "mm", 0),
        indicator="BI-RADS Category",
        indicator_values=("2", "3"),
        finding=(
            "At the {part} there is a {symptom}, measuring {anomaly_quant}, with an imperceptible wall and no"
            " solid component, thick septation or internal vascularity. The {organ} measures {organ_quant} in"
            " thickness. The left axilla is normal."
        ),
        impression="Benign {symptom} ({anomaly_quant}) at the {part}, consistent with a simple cyst.",
        treatment=(
            "For {indicator} {indicator_value}, no biopsy is needed: a simple cyst (category 2) returns to"
            " routine screening, and a cyst rated category 3 because of doubtful low-level echoes is"
            " rechecked by ultrasound in 6 months. A painful cyst can be aspirated under ultrasound guidance."
        ),
        age=(35, 60),
        female_share=1.0,
        histories=(
            "Perimenopausal with cyclical breast tenderness",
            "Aspiration of a right breast cyst three years ago",
            "Fibrocystic changes on previous imaging",
        ),
        complaints=(
            "Smooth, tender lump in the left breast that appeared within a week",
            "Mobile lump noticed in the shower",
            "Focal left breast pain",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Fibroadenoma",
        part="lower outer quadrant of the right breast",
        symptom="oval circumscribed hypoechoic solid mass parallel to the skin",
        organ="right breast fibroglandular tissue",
        organ_dim="thickness",
        organ_quantity=Quantity(8, 25, "mm", 0),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(10, 30, "mm", 0),
        indicator="BI-RADS Category",
        indicator_values=("3", "4A"),
        finding=(
            "In the {part} there is an {symptom}, measuring {anomaly_quant}, with gentle lobulation,"
            " homogeneous internal echoes and minimal peripheral vascularity. The {organ} measures"
            " {organ_quant} in thickness. No axillary lymphadenopathy."
        ),
        impression="Probably benign {symptom} ({anomaly_quant}) in the {part}, likely fibroadenoma.",
        treatment=(
            "For {indicator} {indicator_value}: a category 3 mass is followed by ultrasound at 6, 12 and 24"
            " months, while category 4A, interval growth or size over 3 cm prompts ultrasound-guided core"
            " needle biopsy. Excision is reserved for symptomatic, enlarging or biopsy-discordant lesions."
        ),
        age=(25, 50),
        female_share=1.0,
        histories=(
            "Combined oral contraceptive use for several years",
            "Fibroadenoma excised from the left breast at age 22",
            "No family history of breast cancer",
        ),
        complaints=(
            "Firm, rubbery, mobile lump in the right breast",
            "Painless lump found on self-examination",
            "Lump that does not change over the menstrual cycle",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Invasive ductal carcinoma",
        part="12 o'clock position of the left breast",
        symptom="irregular hypoechoic mass with angular margins and posterior acoustic shadowing",
        organ="left axillary lymph node",
        organ_dim="cortical thickness",
        organ_quantity=Quantity(3.5, 8.0, "mm"),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(10, 40, "mm", 0),
        indicator="BI-RADS Category",
        indicator_values=("4C", "5"),
        finding=(
            "At the {part} there is an {symptom}, not parallel to the skin, measuring {anomaly_quant}, with"
            " an echogenic halo and internal vascularity. A {organ} shows eccentric cortical thickening to"
            " {organ_quant} with effacement of the fatty hilum."
        ),
        impression="Highly suspicious {symptom} ({anomaly_quant}) at the {part} with an abnormal {organ}.",
        treatment=(
            "For {indicator} {indicator_value}, perform ultrasound-guided core needle biopsy of the mass and"
            " needle sampling of the abnormal axillary node, with clip placement. If node-positive invasive"
            " ductal carcinoma is confirmed, consider neoadjuvant systemic therapy according to receptor"
            " status, followed by surgery and axillary management."
        ),
        age=(35, 75),
        female_share=0.99,
        histories=(
            "BRCA1 mutation carrier who declined risk-reducing surgery",
            "Mother and maternal aunt with breast cancer",
            "Right breast cancer treated with lumpectomy eight years ago",
        ),
        complaints=(
            "Hard, fixed lump in the left breast noticed a month ago",
            "Palpable lump in the left armpit",
            "Skin dimpling above the left nipple",
        ),
    ),
)

SCENARIOS: tuple[Scenario, ...] = (*_MAMMOGRAPHY, *_MRI, *_ULTRASOUND)
