"""Abdomen and pelvis scenarios: three per modality (X-ray, CT, MRI, Ultrasound)."""

from __future__ import annotations

from clineval.environments.radbench.knowledge import Quantity, Scenario

_A = "Abdomen and Pelvis"

_XRAY: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Small bowel obstruction",
        part="central abdomen",
        symptom="dilated small bowel loops with multiple air-fluid levels",
        organ="colon",
        organ_dim="diameter",
        organ_quantity=Quantity(2.0, 4.5, "cm"),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(3.2, 5.5, "cm"),
        indicator="AAST EGS small bowel obstruction grade",
        indicator_values=("I", "II"),
        finding=(
            "Supine and erect views show {symptom} in the {part} in a stepladder pattern, the widest loop"
            " measuring {anomaly_quant}. The {organ} is not distended (maximal diameter {organ_quant}) with"
            " little colorectal gas. No free intraperitoneal air."
        ),
        impression="Mechanical small bowel obstruction: {symptom} up to {anomaly_quant}, no free air.",
        treatment=(
            "With an {indicator} of {indicator_value} and no signs of strangulation, start nonoperative"
            " management: nil by mouth, nasogastric decompression, IV fluids and a water-soluble contrast"
            " challenge. Obtain contrast-enhanced CT to locate the transition point and exclude ischemia, and"
            " operate for peritonitis, ischemia or failure to resolve within 72 hours."
        ),
        age=(30, 85),
        female_share=0.5,
        histories=(
            "Laparotomy for a perforated appendix ten years ago",
            "Laparoscopic right hemicolectomy for colon cancer",
            "Previous adhesive obstruction managed conservatively",
        ),
        complaints=(
            "Colicky central abdominal pain with bilious vomiting",
            "Abdominal distension and no flatus for 24 hours",
            "Cramping pain and repeated vomiting since yesterday",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Pneumoperitoneum",
        part="right subdiaphragmatic space",
        symptom="crescent of free intraperitoneal gas",
        organ="right hemidiaphragm",
        organ_dim="thickness",
        organ_quantity=Quantity(2.0, 5.0, "mm"),
        anomaly_dim="height",
        anomaly_quantity=Quantity(4, 30, "mm", 0),
        indicator="Boey score",
        indicator_values=("0", "1", "2"),
        finding=(
            "The erect radiograph shows a {symptom} in the {part}, up to {anomaly_quant} in height,"
            " separating the liver from the diaphragm. The {organ} is outlined on both surfaces as a thin"
            " line of {organ_quant}. No dilated bowel loops."
        ),
        impression="Pneumoperitoneum: {symptom} in the {part} up to {anomaly_quant}, indicating perforation.",
        treatment=(
            "Treat as a presumed perforated peptic ulcer: nil by mouth, IV fluids, IV proton pump inhibitor,"
            " broad-spectrum antibiotics and urgent surgical review. With a {indicator} of {indicator_value},"
            " confirm the site with CT and proceed to laparoscopic or open omental patch repair; nonoperative"
            " care is reserved for stable patients with a sealed perforation."
        ),
        age=(35, 85),
        female_share=0.35,
        histories=(
            "Regular NSAID use for osteoarthritis",
            "Known duodenal ulcer with untreated Helicobacter pylori",
            "Heavy smoker taking low-dose aspirin",
        ),
        complaints=(
            "Sudden severe epigastric pain spreading across the abdomen",
            "Rigid, board-like abdomen with pain on movement",
            "Abrupt abdominal pain followed by shoulder-tip pain",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Staghorn renal calculus",
        part="left renal collecting system",
        symptom="branching radiopaque calculus",
        organ="left kidney",
        organ_dim="length",
        organ_quantity=Quantity(9.5, 12.5, "cm"),
        anomaly_dim="length",
        anomaly_quantity=Quantity(25, 65, "mm", 0),
        indicator="Guy's stone score",
        indicator_values=("Grade III", "Grade IV"),
        finding=(
            "A {symptom} conforming to the renal pelvis and calyces occupies the {part}, measuring"
            " {anomaly_quant} in greatest length. The {organ} outline measures {organ_quant} in length. No"
            " other radiopaque calculi along the ureter or in the bladder."
        ),
        impression="Staghorn calculus: {symptom} of {anomaly_quant} in the {part}.",
        treatment=(
            "Percutaneous nephrolithotomy is first-line for a staghorn calculus; {indicator}"
            " {indicator_value} predicts a lower stone-free rate, so staged or combined endoscopic procedures"
            " may be needed. Treat infection according to urine culture beforehand, plan with non-contrast"
            " CT, and complete a metabolic evaluation after stone analysis."
        ),
        age=(35, 75),
        female_share=0.6,
        histories=(
            "Recurrent Proteus urinary tract infections",
            "Neurogenic bladder managed with intermittent catheterization",
            "Previous left ureteroscopy for stones",
        ),
        complaints=(
            "Dull left flank ache for several months",
            "Recurrent fevers with foul-smelling urine",
            "Visible blood in the urine",
        ),
    ),
)

_CT: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Acute appendicitis",
        part="right lower quadrant",
        symptom="distended appendix with wall enhancement and periappendiceal fat stranding",
        organ="appendix",
        organ_dim="length",
        organ_quantity=Quantity(6.0, 11.0, "cm"),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(8, 15, "mm", 0),
        indicator="Alvarado score",
        indicator_values=("6", "7", "8", "9"),
        finding=(
            "Contrast-enhanced CT shows a {symptom} in the {part}, with an outer diameter of {anomaly_quant}."
            " The {organ} measures {organ_quant} in length and arises normally from the cecal base. No"
            " appendicolith, extraluminal gas or abscess."
        ),
        impression="Acute uncomplicated appendicitis: {symptom}, maximal diameter {anomaly_quant}.",
        treatment=(
            "With an {indicator} of {indicator_value} and CT-confirmed uncomplicated appendicitis,"
            " laparoscopic appendectomy with a single preoperative dose of antibiotics is recommended. An"
            " antibiotics-first strategy is a reasonable alternative without an appendicolith after shared"
            " decision-making."
        ),
        age=(12, 60),
        female_share=0.45,
        histories=(
            "No previous abdominal surgery",
            "Recent viral upper respiratory infection",
            "Well-controlled type 1 diabetes",
        ),
        complaints=(
            "Periumbilical pain migrating to the right lower quadrant",
            "Right lower quadrant pain with anorexia and nausea",
            "Fever and abdominal pain worse with walking",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Acute pancreatitis",
        part="left anterior pararenal space",
        symptom="peripancreatic fat stranding with an acute peripancreatic fluid collection",
        organ="pancreas",
        organ_dim="thickness",
        organ_quantity=Quantity(2.5, 4.0, "cm"),
        anomaly_dim="volume",
        anomaly_quantity=Quantity(30, 250, "mL", 0),
        indicator="Modified CT Severity Index",
        indicator_values=("4", "6"),
        finding=(
            "The {organ} is diffusely enlarged and edematous, with a body thickness of {organ_quant}, and"
            " enhances homogeneously without necrosis. There is {symptom} extending into the {part}, with an"
            " estimated collection volume of {anomaly_quant}. The common bile duct is not dilated."
        ),
        impression="Acute interstitial edematous pancreatitis: {symptom} (about {anomaly_quant}).",
        treatment=(
            "A {indicator} of {indicator_value} indicates moderate severity: give goal-directed moderate IV"
            " fluids with lactated Ringer's, analgesia and early oral feeding, without prophylactic"
            " antibiotics. Acute fluid collections usually resolve and should not be drained; if the cause is"
            " biliary, perform cholecystectomy during the same admission."
        ),
        age=(25, 75),
        female_share=0.45,
        histories=(
            "Heavy alcohol use for fifteen years",
            "Gallstones seen on a previous ultrasound",
            "Poorly controlled hypertriglyceridemia",
        ),
        complaints=(
            "Severe epigastric pain radiating to the back",
            "Persistent vomiting with upper abdominal pain",
            "Epigastric pain after a heavy meal, eased by leaning forward",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Renal cell carcinoma",
        part="lower pole of the right kidney",
        symptom="heterogeneously enhancing solid renal mass",
        organ="right kidney",
        organ_dim="length",
        organ_quantity=Quantity(10.0, 12.5, "cm"),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(4.1, 7.0, "cm"),
        indicator="R.E.N.A.L. nephrometry score",
        indicator_values=("6p", "7a", "8p", "9x"),
        finding=(
            "A partly exophytic {symptom} arises from the {part}, measuring {anomaly_quant}, with avid"
            " corticomedullary enhancement and central low attenuation. The {organ} measures {organ_quant} in"
            " length; the renal vein and IVC are patent and there is no retroperitoneal lymphadenopathy."
        ),
        impression="A {anomaly_quant} {symptom} in the {part}, most consistent with renal cell carcinoma.",
        treatment=(
            "For a cT1b renal mass ({indicator} {indicator_value}), partial nephrectomy is preferred when"
            " technically feasible, with radical nephrectomy if nephron-sparing surgery is not feasible."
            " Complete staging with chest CT, and consider renal mass biopsy if it would change management."
        ),
        age=(45, 80),
        female_share=0.35,
        histories=(
            "Smoker with a 30 pack-year history",
            "Hypertension and obesity",
            "Chronic kidney disease stage 2",
        ),
        complaints=(
            "Painless visible hematuria",
            "Dull right flank pain",
            "Asymptomatic, mass found incidentally on imaging",
        ),
    ),
)

_MRI: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Hepatocellular carcinoma",
        part="hepatic segment VIII",
        symptom="arterial-phase hyperenhancing nodule with nonperipheral washout and an enhancing capsule",
        organ="liver",
        organ_dim="volume",
        organ_quantity=Quantity(900, 1500, "mL", 0),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(2.0, 4.8, "cm"),
        indicator="Child-Pugh class",
        indicator_values=("A (5 points)", "A (6 points)", "B (7 points)"),
        finding=(
            "The {organ} has a nodular contour with caudate hypertrophy and a volume of {organ_quant}. In"
            " {part} there is a {anomaly_quant} {symptom}, hypointense in the hepatobiliary phase. No tumor"
            " in vein, additional observations or extrahepatic disease."
        ),
        impression=(
            "LR-5 {anomaly_quant} {symptom} in {part} of a cirrhotic liver, definite hepatocellular"
            " carcinoma."
        ),
        treatment=(
            "Discuss at a multidisciplinary liver tumor board. With {indicator} {indicator_value} and a"
            " single tumor within Milan criteria, options are resection or thermal ablation when liver"
            " function is preserved without clinically significant portal hypertension, or liver"
            " transplantation, with transarterial chemoembolization as a bridge."
        ),
        age=(45, 80),
        female_share=0.25,
        histories=(
            "Chronic hepatitis B on entecavir",
            "Alcohol-related cirrhosis, abstinent for two years",
            "Hepatitis C cured with direct-acting antivirals",
        ),
        complaints=(
            "Rising alpha-fetoprotein on surveillance",
            "New liver nodule on surveillance ultrasound",
            "Right upper quadrant discomfort and weight loss",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Uterine fibroids",
        part="posterior myometrium of the uterine body",
        symptom="well-circumscribed T2-hypointense intramural mass",
        organ="uterus",
        organ_dim="volume",
        organ_quantity=Quantity(200, 700, "mL", 0),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(3.0, 9.0, "cm"),
        indicator="FIGO leiomyoma classification",
        indicator_values=("Type 3", "Type 4", "Type 5"),
        finding=(
            "The {organ} is enlarged, with a volume of {organ_quant}. A {symptom} in the {part} measures"
            " {anomaly_quant}, with homogeneous enhancement and no restricted diffusion or hemorrhage. The"
            " endometrium is displaced but not invaded, and both ovaries are normal."
        ),
        impression="Uterine leiomyoma: {symptom} of {anomaly_quant} in the {part}, no atypical features.",
        treatment=(
            "For a symptomatic {indicator_value} leiomyoma ({indicator}), start medical therapy (tranexamic"
            " acid, hormonal options or an oral GnRH antagonist with add-back therapy). If symptoms persist,"
            " offer uterine artery embolization or myomectomy when fertility is desired, and hysterectomy"
            " when childbearing is complete."
        ),
        age=(30, 52),
        female_share=1.0,
        histories=(
            "Nulliparous and planning pregnancy",
            "Iron-deficiency anemia on oral iron",
            "Two previous caesarean deliveries",
        ),
        complaints=(
            "Heavy, prolonged menstrual bleeding",
            "Pelvic pressure and urinary frequency",
            "Lower abdominal fullness and painful periods",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Prostate cancer",
        part="left peripheral zone at the mid-gland",
        symptom="focal T2-hypointense lesion with marked diffusion restriction",
        organ="prostate gland",
        organ_dim="volume",
        organ_quantity=Quantity(25, 80, "mL", 0),
        anomaly_dim="apparent diffusion coefficient",
        anomaly_quantity=Quantity(550, 900, "×10⁻⁶ mm²/s", 0),
        indicator="PI-RADS v2.1 score",
        indicator_values=("4", "5"),
        finding=(
            "The {organ} measures {organ_quant} in volume. There is a {symptom} in the {part}, with a mean"
            " ADC of {anomaly_quant} and early focal enhancement. The seminal vesicles and pelvic lymph nodes"
            " are unremarkable."
        ),
        impression="Suspicious {symptom} in the {part}, likely clinically significant prostate cancer.",
        treatment=(
            "With a {indicator} of {indicator_value}, perform MRI-targeted plus systematic biopsy, preferably"
            " transperineal. If cancer is confirmed, choose management by grade group, PSA and stage: active"
            " surveillance for low risk, and radical prostatectomy or radiotherapy with androgen deprivation"
            " for intermediate or high risk."
        ),
        age=(50, 80),
        female_share=0.0,
        histories=(
            "PSA rising from 4.8 to 7.2 ng/mL over one year",
            "Father diagnosed with prostate cancer at 62",
            "Previous negative systematic biopsy",
        ),
        complaints=(
            "Elevated PSA on routine screening",
            "Firm nodule on digital rectal examination",
            "Mild nocturia, otherwise asymptomatic",
        ),
    ),
)

_ULTRASOUND: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Acute cholecystitis",
        part="gallbladder fundus and body",
        symptom="thickened gallbladder wall with pericholecystic fluid",
        organ="common bile duct",
        organ_dim="diameter",
        organ_quantity=Quantity(3.0, 6.0, "mm"),
        anomaly_dim="thickness",
        anomaly_quantity=Quantity(4.0, 9.0, "mm"),
        indicator="Tokyo Guidelines 2018 severity grading",
        indicator_values=("Grade I (mild)", "Grade II (moderate)"),
        finding=(
            "The gallbladder is distended, with a {symptom} at the {part}; the wall measures up to"
            " {anomaly_quant}, and an immobile calculus is impacted in the neck. The sonographic Murphy sign"
            " is positive. The {organ} measures {organ_quant} without intraductal stones."
        ),
        impression="Acute calculous cholecystitis: {symptom} (wall {anomaly_quant}), normal-caliber {organ}.",
        treatment=(
            "For {indicator_value} acute cholecystitis ({indicator}), give IV fluids, analgesia and"
            " antibiotics and perform early laparoscopic cholecystectomy, ideally within 72 hours of onset,"
            " if the Charlson comorbidity index and ASA class allow. If unfit for surgery, use percutaneous"
            " cholecystostomy or antibiotics with delayed cholecystectomy."
        ),
        age=(30, 80),
        female_share=0.6,
        histories=(
            "Known gallstones with previous biliary colic",
            "Type 2 diabetes and obesity",
            "Rapid weight loss after bariatric surgery",
        ),
        complaints=(
            "Constant right upper quadrant pain for over 24 hours",
            "Fever with right upper quadrant tenderness",
            "Nausea and vomiting with persistent pain after a fatty meal",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Nonalcoholic fatty liver disease (NAFLD)",
        part="both hepatic lobes",
        symptom="diffusely increased parenchymal echogenicity",
        organ="liver",
        organ_dim="length",
        organ_quantity=Quantity(14.0, 19.0, "cm"),
        anomaly_dim="hepatorenal index",
        anomaly_quantity=Quantity(1.4, 2.6, "", 2),
        indicator="Sonographic hepatic steatosis grade",
        indicator_values=("1 (mild)", "2 (moderate)"),
        finding=(
            "The {organ} shows {symptom} in {part} relative to the right renal cortex, with a hepatorenal"
            " index of {anomaly_quant} and a clearly visible diaphragm. The {organ} measures {organ_quant} in"
            " midclavicular length, with a smooth surface and no focal lesion; portal venous flow is"
            " hepatopetal."
        ),
        impression="Hepatic steatosis: {symptom} (hepatorenal index {anomaly_quant}), no signs of cirrhosis.",
        treatment=(
            "{indicator} {indicator_value}: recommend lifestyle change aiming for 7-10% weight loss, regular"
            " exercise and limited alcohol, and treat diabetes, dyslipidemia and hypertension. Assess"
            " fibrosis risk with FIB-4, followed by transient elastography if FIB-4 is 1.3 or higher."
        ),
        age=(30, 70),
        female_share=0.45,
        histories=(
            "Type 2 diabetes and hypertension",
            "Metabolic syndrome with hypertriglyceridemia",
            "Obstructive sleep apnea and prediabetes",
        ),
        complaints=(
            "Persistently raised ALT on routine blood tests",
            "Vague right upper quadrant discomfort",
            "Fatigue, otherwise asymptomatic",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Ovarian cancer",
        part="left adnexa",
        symptom="multilocular cystic mass with a vascularized solid papillary component",
        organ="uterus",
        organ_dim="length",
        organ_quantity=Quantity(5.5, 8.5, "cm"),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(5.0, 12.0, "cm"),
        indicator="O-RADS US risk category",
        indicator_values=("4", "5"),
        finding=(
            "A {symptom} arises from the {part}, measuring {anomaly_quant} in maximal diameter, with internal"
            " flow in the solid component on color Doppler. The {organ} measures {organ_quant} in length with"
            " a thin endometrium; the right ovary is unremarkable."
        ),
        impression="Complex {symptom} ({anomaly_quant}) in the {part}, suspicious for ovarian malignancy.",
        treatment=(
            "For {indicator} {indicator_value}, measure CA-125 (with HE4 for the ROMA score) and refer to a"
            " gynecologic oncologist for surgical staging. Contrast-enhanced CT of the chest, abdomen and"
            " pelvis assesses peritoneal spread, and MRI can further characterize a category 4 lesion."
        ),
        age=(45, 80),
        female_share=1.0,
        histories=(
            "Postmenopausal, no hormone therapy",
            "BRCA1 mutation carrier who declined risk-reducing surgery",
            "Nulliparous with long-standing endometriosis",
        ),
        complaints=(
            "Abdominal bloating and early satiety for three months",
            "Pelvic pressure and urinary frequency",
            "Palpable lower abdominal mass",
        ),
    ),
)

SCENARIOS: tuple[Scenario, ...] = (*_XRAY, *_CT, *_MRI, *_ULTRASOUND)
