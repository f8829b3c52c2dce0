"""Chest scenarios: three per modality (X-ray, CT, MRI, Ultrasound)."""

from __future__ import annotations

from clineval.environments.radbench.knowledge import Quantity, Scenario

_A = "Chest"

_XRAY: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Lobar pneumonia",
        part="right lower lobe",
        symptom="consolidation with air bronchograms",
        organ="heart",
        organ_dim="cardiothoracic ratio",
        organ_quantity=Quantity(0.40, 0.49, "", 2),
        anomaly_dim="craniocaudal extent",
        anomaly_quantity=Quantity(5, 11, "cm"),
        indicator="CURB-65 Score",
        indicator_values=("1 (low severity)", "2 (moderate severity)", "3 (high severity)"),
        finding=(
            "PA chest radiograph shows homogeneous {symptom} in the {part}, spanning {anomaly_quant}"
            " craniocaudally and silhouetting the right hemidiaphragm. The {organ} is normal in size with a"
            " cardiothoracic ratio of {organ_quant}. Small right costophrenic angle blunting; no"
            " pneumothorax."
        ),
        impression="Lobar pneumonia: {symptom} in the {part}.",
        treatment=(
            "With a {indicator} of {indicator_value}, treat low severity with oral amoxicillin at home,"
            " moderate severity in hospital with amoxicillin plus a macrolide, and high severity with an IV"
            " beta-lactam plus a macrolide and assessment for critical care. Send blood and sputum cultures"
            " and urinary antigens, and repeat the radiograph at 6 weeks if symptoms persist or risk of"
            " malignancy is high."
        ),
        age=(30, 85),
        female_share=0.45,
        histories=(
            "COPD with a 30 pack-year smoking history",
            "Type 2 diabetes and chronic kidney disease",
            "Previously healthy, recent influenza-like illness",
        ),
        complaints=(
            "Fever, rigors and productive cough with rusty sputum",
            "Right-sided pleuritic chest pain and breathlessness",
            "Cough, fever and new confusion",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Pneumothorax",
        part="right pleural space",
        symptom="visceral pleural line with absent peripheral lung markings",
        organ="right lung",
        organ_dim="estimated collapse (Light index)",
        organ_quantity=Quantity(25, 60, "%"),
        anomaly_dim="apex-to-cupola distance",
        anomaly_quantity=Quantity(3.0, 7.5, "cm"),
        indicator="ACCP clinical stability criteria",
        indicator_values=(
            "clinically stable (RR <24/min, SpO2 >90% on room air)",
            "clinically unstable (RR ≥24/min or SpO2 ≤90% on room air)",
        ),
        finding=(
            "Erect PA chest radiograph shows a {symptom} in the {part}, the apex-to-cupola distance measuring"
            " {anomaly_quant}. The {organ} is partially collapsed, with an estimated collapse of"
            " {organ_quant}. The trachea is midline and there is no pleural fluid."
        ),
        impression="Large right pneumothorax ({anomaly_quant} apex-to-cupola) without mediastinal shift.",
        treatment=(
            "By the {indicator} the patient is {indicator_value}. A large pneumothorax in a stable patient is"
            " managed by needle aspiration or a small-bore (14 F or less) chest drain, or conservatively if"
            " minimally symptomatic; an unstable patient needs immediate chest drain insertion and oxygen."
            " Advise smoking cessation and no air travel until resolution; refer for VATS pleurodesis if the"
            " air leak persists or the pneumothorax recurs."
        ),
        age=(16, 40),
        female_share=0.2,
        histories=(
            "Tall, thin current smoker",
            "Left-sided pneumothorax treated with aspiration three years ago",
            "Cannabis smoker, otherwise well",
        ),
        complaints=(
            "Sudden right-sided chest pain at rest",
            "Acute breathlessness and sharp pain on breathing in",
            "Chest tightness and shortness of breath since this morning",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Cardiomegaly",
        part="cardiac silhouette",
        symptom="enlarged cardiac silhouette",
        organ="heart",
        organ_dim="transverse cardiac diameter",
        organ_quantity=Quantity(15.5, 20.0, "cm"),
        anomaly_dim="cardiothoracic ratio",
        anomaly_quantity=Quantity(0.52, 0.68, "", 2),
        indicator="New York Heart Association (NYHA) Functional Classification",
        indicator_values=(
            "Class II (slight limitation of physical activity)",
            "Class III (marked limitation)",
        ),
        finding=(
            "PA chest radiograph shows an {symptom} with a cardiothoracic ratio of {anomaly_quant}; the"
            " {part} is globular with a prominent left ventricular contour. The {organ} measures"
            " {organ_quant} in transverse diameter. There is upper-lobe pulmonary venous diversion with small"
            " bilateral pleural effusions and no focal consolidation."
        ),
        impression="Cardiomegaly (CTR {anomaly_quant}) with pulmonary venous congestion.",
        treatment=(
            "Obtain transthoracic echocardiography, NT-proBNP and ECG to establish the cause and ejection"
            " fraction; the {indicator} is {indicator_value}. Relieve congestion with loop diuretics and, if"
            " the ejection fraction is reduced, start guideline-directed therapy (ACE inhibitor or ARNI,"
            " beta-blocker, mineralocorticoid antagonist, SGLT2 inhibitor) with review in 2 weeks."
        ),
        age=(50, 85),
        female_share=0.4,
        histories=(
            "Long-standing hypertension",
            "Previous anterior myocardial infarction",
            "Atrial fibrillation on anticoagulation",
        ),
        complaints=(
            "Breathlessness on climbing one flight of stairs",
            "Swollen ankles and needing three pillows at night",
            "Waking up at night gasping for breath",
        ),
    ),
)

_CT: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Pulmonary embolism",
        part="right interlobar and lower lobe segmental pulmonary arteries",
        symptom="intraluminal filling defect",
        organ="right ventricle",
        organ_dim="RV/LV diameter ratio",
        organ_quantity=Quantity(0.8, 1.3, "", 2),
        anomaly_dim="length",
        anomaly_quantity=Quantity(10, 40, "mm"),
        indicator="Pulmonary Embolism Severity Index (PESI)",
        indicator_values=(
            "Class I (65 points or less, very low risk)",
            "Class II (66–85 points, low risk)",
            "Class III (86–105 points, intermediate risk)",
        ),
        finding=(
            "CT pulmonary angiography shows a central {symptom} in the {part}, extending {anomaly_quant}"
            " along the vessels, with a peripheral wedge-shaped opacity in the right lower lobe. The {organ}"
            " to left ventricle diameter ratio is {organ_quant}. No pericardial effusion."
        ),
        impression="Acute right-sided pulmonary embolism with an {symptom} in the {part}.",
        treatment=(
            "Start anticoagulation with a direct oral anticoagulant (or low-molecular-weight heparin); the"
            " {indicator} is {indicator_value}. Classes I–II may be treated as outpatients, higher classes"
            " are admitted with troponin, BNP and echocardiography to look for RV dysfunction; reserve"
            " systemic thrombolysis for haemodynamic instability. Anticoagulate for at least 3 months."
        ),
        age=(30, 85),
        female_share=0.5,
        histories=(
            "Total knee replacement three weeks ago",
            "Active breast cancer on chemotherapy",
            "Long-haul flight last week and combined oral contraceptive use",
        ),
        complaints=(
            "Sudden breathlessness and right-sided pleuritic chest pain",
            "Haemoptysis and a racing heart",
            "Breathlessness with a painful swollen left calf",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Lung adenocarcinoma",
        part="apical segment of the right upper lobe",
        symptom="spiculated solid nodule",
        organ="lungs",
        organ_dim="emphysema extent (low-attenuation area below -950 HU)",
        organ_quantity=Quantity(2, 18, "%"),
        anomaly_dim="maximal diameter",
        anomaly_quantity=Quantity(21, 29, "mm"),
        indicator="TNM Staging",
        indicator_values=("T1cN0M0 (stage IA3)", "T1cN1M0 (stage IIB)", "T1cN2M0 (stage IIIA)"),
        finding=(
            "Contrast-enhanced chest CT shows a {symptom} in the {part}, measuring {anomaly_quant}, with"
            " pleural retraction and no calcification. Centrilobular emphysema involves {organ_quant} of the"
            " {organ}. No pleural effusion or bone lesion."
        ),
        impression="Likely primary lung cancer: {symptom} of {anomaly_quant} in the {part}.",
        treatment=(
            "Complete staging with PET-CT, brain MRI and EBUS nodal sampling, with biopsy for histology and"
            " molecular testing (EGFR, ALK, PD-L1); the {indicator} is {indicator_value}. Stage I–II disease"
            " is treated with lobectomy and systematic nodal dissection (stereotactic radiotherapy if unfit),"
            " stage III in a thoracic MDT with multimodality therapy."
        ),
        age=(50, 85),
        female_share=0.45,
        histories=(
            "Current smoker, 45 pack-years",
            "Former smoker with COPD",
            "Asbestos exposure as a shipyard worker",
        ),
        complaints=(
            "Persistent cough for two months",
            "Unintentional weight loss and fatigue",
            "Streaks of blood in the sputum",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Thymoma",
        part="anterior mediastinum",
        symptom="well-circumscribed lobulated soft-tissue mass",
        organ="pericardium",
        organ_dim="thickness",
        organ_quantity=Quantity(1.0, 2.5, "mm"),
        anomaly_dim="maximal diameter",
        anomaly_quantity=Quantity(35, 75, "mm"),
        indicator="Masaoka-Koga Staging",
        indicator_values=(
            "Stage I (completely encapsulated)",
            "Stage IIa (microscopic transcapsular invasion)",
            "Stage IIb (macroscopic invasion into surrounding fat)",
        ),
        finding=(
            "Contrast-enhanced chest CT shows a homogeneously enhancing {symptom} in the {part}, measuring"
            " {anomaly_quant}, abutting the ascending aorta with preserved fat planes. The {organ} is smooth"
            " with a thickness of {organ_quant}. No pleural nodules or lymphadenopathy."
        ),
        impression="Thymoma favoured: {symptom} of the {part} measuring {anomaly_quant}.",
        treatment=(
            "Check acetylcholine-receptor antibodies before surgery and avoid percutaneous biopsy if the mass"
            " is resectable; plan complete thymectomy with en bloc resection. The {indicator} is"
            " {indicator_value} on the resected specimen; consider adjuvant radiotherapy for stage IIb or"
            " incomplete resection, with CT every 6 months for 2 years and then yearly."
        ),
        age=(40, 70),
        female_share=0.5,
        histories=(
            "Myasthenia gravis diagnosed last year",
            "No significant past medical history",
            "Hypertension on an ACE inhibitor",
        ),
        complaints=(
            "Drooping eyelids and double vision worse in the evening",
            "Dull retrosternal ache and cough",
            "No symptoms; mediastinal widening on a pre-operative radiograph",
        ),
    ),
)

_MRI: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Hypertrophic cardiomyopathy",
        part="basal anterior interventricular septum",
        symptom="asymmetric septal hypertrophy",
        organ="left ventricle",
        organ_dim="ejection fraction",
        organ_quantity=Quantity(60, 78, "%", 0),
        anomaly_dim="maximal end-diastolic wall thickness",
        anomaly_quantity=Quantity(16, 28, "mm"),
        indicator="ESC HCM Risk-SCD (5-year sudden cardiac death risk)",
        indicator_values=("low (below 4%)", "intermediate (4–6%)", "high (6% or more)"),
        finding=(
            "Cardiac MRI shows {symptom} of the {part}, with a maximal end-diastolic wall thickness of"
            " {anomaly_quant}, and patchy mid-wall late gadolinium enhancement at the right ventricular"
            " insertion points. The {organ} is non-dilated with an ejection fraction of {organ_quant}. No"
            " apical aneurysm."
        ),
        impression="Hypertrophic cardiomyopathy with {symptom} of {anomaly_quant} in the {part}.",
        treatment=(
            "The {indicator} is {indicator_value}: an ICD is recommended when the risk is 6% or more and"
            " considered at 4–6%. Treat symptoms with a beta-blocker or non-dihydropyridine calcium-channel"
            " blocker, assess LV outflow obstruction by echocardiography (myosin inhibitor or septal"
            " reduction if obstructive and refractory), perform Holter monitoring and genetic testing with"
            " screening of first-degree relatives."
        ),
        age=(20, 65),
        female_share=0.4,
        histories=(
            "Brother died suddenly aged 32",
            "Abnormal ECG with deep T-wave inversion at a sports screening",
            "Heart murmur noted by the general practitioner",
        ),
        complaints=(
            "Chest tightness and breathlessness on exertion",
            "Light-headedness when climbing stairs",
            "Palpitations and a brief faint during exercise",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Dilated cardiomyopathy",
        part="mid interventricular septum",
        symptom="linear mid-wall late gadolinium enhancement",
        organ="left ventricle",
        organ_dim="end-diastolic volume index",
        organ_quantity=Quantity(110, 170, "mL/m²", 0),
        anomaly_dim="extent (% of LV myocardial mass)",
        anomaly_quantity=Quantity(2, 12, "%"),
        indicator="New York Heart Association (NYHA) Functional Classification",
        indicator_values=(
            "Class II (slight limitation of physical activity)",
            "Class III (marked limitation)",
        ),
        finding=(
            "Cardiac MRI shows a dilated, globally hypokinetic {organ} with an end-diastolic volume index of"
            " {organ_quant} and reduced systolic function. There is {symptom} in the {part}, involving"
            " {anomaly_quant} of the left ventricular myocardium, without a subendocardial (ischaemic)"
            " pattern. Mild functional mitral regurgitation."
        ),
        impression="Non-ischaemic dilated cardiomyopathy with {symptom} in the {part}.",
        treatment=(
            "With {indicator} {indicator_value}, start guideline-directed therapy (ACE inhibitor or ARNI,"
            " beta-blocker, mineralocorticoid antagonist, SGLT2 inhibitor) with loop diuretics for"
            " congestion. Reassess ejection fraction after 3 months of optimal therapy and consider an ICD if"
            " it remains 35% or less, weighing the scar burden; offer genetic testing and family screening."
        ),
        age=(30, 70),
        female_share=0.35,
        histories=(
            "Father diagnosed with heart failure at 50",
            "Heavy alcohol use for many years",
            "Viral illness three months ago",
        ),
        complaints=(
            "Progressive breathlessness over two months",
            "Fatigue and ankle swelling",
            "Breathlessness when lying flat",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Superior sulcus (Pancoast) tumor",
        part="right lung apex (superior sulcus)",
        symptom="apical mass invading the chest wall",
        organ="right subclavian artery",
        organ_dim="diameter",
        organ_quantity=Quantity(7.0, 10.0, "mm"),
        anomaly_dim="maximal diameter",
        anomaly_quantity=Quantity(35, 65, "mm"),
        indicator="TNM Staging",
        indicator_values=("T3N0M0 (stage IIB)", "T3N1M0 (stage IIIA)", "T4N0M0 (stage IIIA)"),
        finding=(
            "Coronal and sagittal MRI of the thoracic inlet show an {symptom} at the {part}, measuring"
            " {anomaly_quant}, with loss of the extrapleural fat plane and infiltration of the posterior"
            " first intercostal space. The {organ} is patent with a preserved flow void, measuring"
            " {organ_quant}. No intraspinal extension."
        ),
        impression="Right superior sulcus tumour: {symptom} measuring {anomaly_quant}.",
        treatment=(
            "Obtain tissue diagnosis, PET-CT, brain MRI and mediastinal staging; the {indicator} is"
            " {indicator_value}. If resectable, give induction concurrent platinum-based chemoradiotherapy"
            " followed by en bloc resection of the tumour, involved ribs and structures; if unresectable,"
            " definitive chemoradiotherapy with consolidation immunotherapy."
        ),
        age=(45, 80),
        female_share=0.35,
        histories=(
            "Current smoker, 50 pack-years",
            "Former smoker with COPD",
            "Treated for presumed frozen shoulder for three months",
        ),
        complaints=(
            "Right shoulder pain radiating to the inner arm and little finger",
            "Drooping right eyelid and weak grip",
            "Shoulder pain at night and weight loss",
        ),
    ),
)

_ULTRASOUND: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Pleural effusion",
        part="right pleural space",
        symptom="anechoic pleural effusion",
        organ="right hemidiaphragm",
        organ_dim="excursion (M-mode, quiet breathing)",
        organ_quantity=Quantity(0.8, 2.5, "cm"),
        anomaly_dim="maximal interpleural distance",
        anomaly_quantity=Quantity(20, 60, "mm", 0),
        indicator="Light's Criteria for Pleural Effusion",
        indicator_values=(
            "exudate (pleural/serum protein ratio above 0.5)",
            "exudate (pleural/serum LDH ratio above 0.6)",
            "transudate (no criterion met)",
        ),
        finding=(
            "Thoracic ultrasound shows a free-flowing {symptom} in the {part}, with a maximal interpleural"
            " distance of {anomaly_quant} at the base and compressive atelectasis of the right lower lobe."
            " The {organ} excursion is {organ_quant} on M-mode. No septations or pleural nodularity."
        ),
        impression="Simple right pleural effusion ({anomaly_quant}), suitable for guided thoracentesis.",
        treatment=(
            "Perform ultrasound-guided diagnostic thoracentesis (protein, LDH, pH, glucose, cell count, Gram"
            " stain, culture, cytology); by {indicator} the fluid is {indicator_value}. Treat the underlying"
            " cause of a transudate (e.g. diuretics for heart failure); drain an exudate with pH below 7.2 or"
            " pus by chest tube, and remove no more than 1.5 L at a time when draining for symptoms."
        ),
        age=(40, 85),
        female_share=0.45,
        histories=(
            "Congestive heart failure on furosemide",
            "Right lower lobe pneumonia treated two weeks ago",
            "Breast cancer treated five years ago",
        ),
        complaints=(
            "Increasing breathlessness over two weeks",
            "Dull right-sided chest heaviness and dry cough",
            "Unable to lie flat because of breathlessness",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Cardiogenic pulmonary edema",
        part="anterior and lateral zones of both lungs",
        symptom="bilateral B-lines",
        organ="inferior vena cava",
        organ_dim="diameter",
        organ_quantity=Quantity(2.1, 2.8, "cm"),
        anomaly_dim="maximum number per intercostal space",
        anomaly_quantity=Quantity(3, 10, "per intercostal space", 0),
        indicator="Stevenson haemodynamic profile",
        indicator_values=("warm and wet", "cold and wet"),
        finding=(
            "Point-of-care lung ultrasound shows diffuse {symptom} in the {part}, up to {anomaly_quant}, with"
            " a smooth thin pleural line and preserved lung sliding. The {organ} is plethoric, measuring"
            " {organ_quant} with less than 50% inspiratory collapse. Small bilateral pleural effusions."
        ),
        impression="Diffuse {symptom} with a plethoric {organ}, consistent with cardiogenic pulmonary edema.",
        treatment=(
            "The {indicator} is {indicator_value}: give an IV loop diuretic, add nitrates if systolic"
            " pressure is above 110 mmHg and non-invasive ventilation for hypoxaemia or respiratory distress;"
            " a cold and wet profile needs critical care review and inotropic support. Obtain ECG, troponin,"
            " natriuretic peptide and echocardiography, and repeat lung ultrasound to monitor decongestion."
        ),
        age=(55, 90),
        female_share=0.45,
        histories=(
            "Ischaemic cardiomyopathy with an ejection fraction of 30%",
            "Hypertension and aortic stenosis",
            "Chronic kidney disease with missed dialysis",
        ),
        complaints=(
            "Severe breathlessness that started overnight",
            "Frothy pink sputum and inability to lie flat",
            "Rapidly worsening breathlessness and leg swelling",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Pericardial effusion",
        part="pericardial space",
        symptom="circumferential pericardial effusion",
        organ="left ventricle",
        organ_dim="ejection fraction",
        organ_quantity=Quantity(55, 70, "%", 0),
        anomaly_dim="maximal end-diastolic echo-free space",
        anomaly_quantity=Quantity(12, 30, "mm"),
        indicator="Echocardiographic tamponade assessment",
        indicator_values=(
            "no tamponade physiology",
            "right atrial systolic collapse without right ventricular diastolic collapse",
            "tamponade physiology (RV diastolic collapse, mitral inflow variation above 25%)",
        ),
        finding=(
            "Transthoracic echocardiography shows a {symptom} in the {part}, with a maximal end-diastolic"
            " echo-free space of {anomaly_quant} posterior to the left ventricle. The {organ} has normal wall"
            " motion with an ejection fraction of {organ_quant}. No fibrinous strands."
        ),
        impression="Moderate to large {symptom} measuring up to {anomaly_quant}.",
        treatment=(
            "{indicator}: {indicator_value}. Tamponade needs urgent echo-guided pericardiocentesis; otherwise"
            " look for the cause (inflammatory markers, renal and thyroid function, autoimmune and"
            " tuberculosis testing, fluid cytology if drained), give an NSAID with colchicine if pericarditis"
            " is present, and repeat echocardiography in 1–2 weeks."
        ),
        age=(30, 80),
        female_share=0.5,
        histories=(
            "Viral illness three weeks ago",
            "Lung cancer on palliative chemotherapy",
            "End-stage kidney disease on haemodialysis",
        ),
        complaints=(
            "Breathlessness and chest fullness when lying flat",
            "Sharp chest pain relieved by leaning forward",
            "Fatigue and light-headedness on standing",
        ),
    ),
)

SCENARIOS: tuple[Scenario, ...] = _XRAY + _CT + _MRI + _ULTRASOUND
