"""Head and Neck scenarios: three per modality (X-ray, CT, MRI, Ultrasound)."""

from __future__ import annotations

from clineval.environments.radbench.knowledge import Quantity, Scenario

_A = "Head and Neck"

_XRAY: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Maxillary sinusitis",
        part="right maxillary sinus",
        symptom="air-fluid level with mucosal thickening",
        organ="right maxillary sinus",
        organ_dim="transverse width",
        organ_quantity=Quantity(24, 34, "mm"),
        anomaly_dim="fluid level height",
        anomaly_quantity=Quantity(6, 22, "mm"),
        indicator="EPOS rhinosinusitis severity (VAS 0–10)",
        indicator_values=("5/10 (moderate)", "7/10 (moderate)", "8/10 (severe)"),
        finding=(
            "Occipitomental (Waters) view shows an {symptom} in the {part}, the fluid level measuring"
            " {anomaly_quant} in height. The {organ} measures {organ_quant} in transverse width with intact"
            " bony walls. The left maxillary and frontal sinuses are clear."
        ),
        impression="Acute maxillary sinusitis: {symptom} in the {part}.",
        treatment=(
            "With a severity of {indicator_value} on the {indicator}, give saline irrigation, intranasal"
            " corticosteroids and analgesia; add amoxicillin (or amoxicillin-clavulanate) only for symptoms"
            " beyond 10 days, double worsening or severe disease. Reassess in 7–10 days and obtain CT only if"
            " orbital or intracranial complications are suspected or symptoms persist beyond 12 weeks."
        ),
        age=(18, 70),
        female_share=0.55,
        histories=(
            "Upper respiratory tract infection two weeks ago",
            "Seasonal allergic rhinitis",
            "Recent upper molar tooth extraction",
        ),
        complaints=(
            "Right cheek pain and pressure worse on bending forward",
            "Purulent nasal discharge and blocked nose for 12 days",
            "Fever, facial pain and reduced sense of smell",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Adenoid hypertrophy",
        part="posterosuperior nasopharyngeal wall",
        symptom="adenoidal soft-tissue enlargement",
        organ="nasopharyngeal airway",
        organ_dim="minimal anteroposterior width",
        organ_quantity=Quantity(1.5, 5.0, "mm"),
        anomaly_dim="adenoid-nasopharyngeal (A/N) ratio",
        anomaly_quantity=Quantity(0.72, 0.92, "", 2),
        indicator="Paediatric obstructive apnoea-hypopnoea index (polysomnography)",
        indicator_values=("3.5 events/h (mild OSA)", "7 events/h (moderate OSA)", "12 events/h (severe OSA)"),
        finding=(
            "Lateral soft-tissue radiograph of the neck shows convex {symptom} along the {part}, with an A/N"
            " ratio of {anomaly_quant}. The {organ} is narrowed to {organ_quant}. The oropharyngeal airway"
            " and prevertebral soft tissues are otherwise unremarkable."
        ),
        impression="Adenoid hypertrophy (A/N ratio {anomaly_quant}) narrowing the {organ} to {organ_quant}.",
        treatment=(
            "Refer to paediatric ENT; the {indicator} is {indicator_value}. Adenotonsillectomy is first-line"
            " for moderate to severe obstructive sleep apnoea, while mild cases may first receive a 6–12 week"
            " trial of intranasal corticosteroids with or without montelukast. Repeat polysomnography after"
            " surgery when the preoperative disease was severe."
        ),
        age=(3, 9),
        female_share=0.45,
        histories=(
            "Recurrent otitis media with effusion",
            "Recurrent upper respiratory infections since starting nursery",
            "Allergic rhinitis treated with antihistamines",
        ),
        complaints=(
            "Loud nightly snoring with witnessed pauses in breathing",
            "Persistent mouth breathing and nasal-sounding speech",
            "Restless sleep and daytime irritability",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="X-ray",
        disease="Mandibular fracture",
        part="left mandibular angle",
        symptom="oblique radiolucent fracture line",
        organ="left mandibular ramus",
        organ_dim="height",
        organ_quantity=Quantity(48, 62, "mm"),
        anomaly_dim="displacement",
        anomaly_quantity=Quantity(1.0, 6.0, "mm"),
        indicator="Facial Injury Severity Scale (FISS)",
        indicator_values=(
            "2 (isolated angle fracture)",
            "3 (angle fracture with dentoalveolar injury)",
            "4 (angle fracture with contralateral parasymphyseal fracture)",
        ),
        finding=(
            "Panoramic radiograph shows an {symptom} through the {part}, with {anomaly_quant} of step"
            " displacement at the inferior border. The {organ} measures {organ_quant} in height. Both"
            " condylar heads are seated in the glenoid fossae."
        ),
        impression="Displaced fracture of the {part} ({anomaly_quant} displacement).",
        treatment=(
            "Obtain facial CT to exclude additional fractures; the {indicator} is {indicator_value}."
            " Displaced angle fractures are treated by open reduction and internal fixation (miniplate along"
            " the external oblique ridge) under peri-operative antibiotics, with removal of a compromised"
            " tooth in the fracture line; soft diet for 4–6 weeks and clinical review at 1 and 6 weeks."
        ),
        age=(16, 45),
        female_share=0.15,
        histories=(
            "Assaulted with a punch to the jaw the night before",
            "Fell from a bicycle without a helmet",
            "Sports collision during a rugby match",
        ),
        complaints=(
            "Left jaw pain and swelling with difficulty opening the mouth",
            "Teeth do not meet properly when biting",
            "Numbness of the left lower lip and chin",
        ),
    ),
)

_CT: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Hypertensive intracerebral hemorrhage",
        part="right basal ganglia (putamen)",
        symptom="hyperdense intraparenchymal hematoma",
        organ="septum pellucidum",
        organ_dim="midline shift",
        organ_quantity=Quantity(1.0, 7.0, "mm"),
        anomaly_dim="volume (ABC/2)",
        anomaly_quantity=Quantity(12, 45, "mL"),
        indicator="Intracerebral Hemorrhage (ICH) Score",
        indicator_values=(
            "1 (30-day mortality about 13%)",
            "2 (30-day mortality about 26%)",
            "3 (30-day mortality about 72%)",
        ),
        finding=(
            "Non-contrast CT of the head shows a {symptom} centred in the {part} with surrounding"
            " low-attenuation oedema, estimated volume {anomaly_quant}. There is leftward displacement of the"
            " {organ} by {organ_quant} with effacement of the right lateral ventricle. No skull fracture."
        ),
        impression="Acute {part} hemorrhage of {anomaly_quant} with {organ_quant} midline shift.",
        treatment=(
            "With an {indicator} of {indicator_value}, admit to a stroke unit or neuro-ICU, lower systolic"
            " blood pressure towards 140 mmHg, reverse any anticoagulation and obtain urgent neurosurgical"
            " review. Perform CT angiography to exclude an underlying vascular lesion and repeat CT at 6–24 h"
            " to detect hematoma expansion; use intermittent pneumatic compression for VTE prophylaxis."
        ),
        age=(45, 85),
        female_share=0.4,
        histories=(
            "Long-standing poorly controlled hypertension",
            "Hypertension and type 2 diabetes, not taking medication",
            "Heavy alcohol use and hypertension",
        ),
        complaints=(
            "Sudden left-sided weakness and slurred speech",
            "Abrupt severe headache with vomiting and drowsiness",
            "Found confused with left facial droop",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Chronic rhinosinusitis",
        part="bilateral maxillary and anterior ethmoid sinuses",
        symptom="mucosal thickening and ostiomeatal complex opacification",
        organ="nasal septum",
        organ_dim="deviation angle",
        organ_quantity=Quantity(3, 15, "degrees", 0),
        anomaly_dim="maximal mucosal thickness",
        anomaly_quantity=Quantity(5, 16, "mm"),
        indicator="Lund-Mackay Score",
        indicator_values=("10/24", "14/24", "18/24"),
        finding=(
            "Coronal sinus CT shows circumferential {symptom} involving the {part}, maximal mucosal thickness"
            " {anomaly_quant}, with sclerotic thickening of the sinus walls. The {organ} deviates to the left"
            " by {organ_quant}. Lamina papyracea and skull base are intact."
        ),
        impression="Chronic rhinosinusitis with {symptom} of the {part}.",
        treatment=(
            "With a {indicator} of {indicator_value}, continue daily saline irrigation and intranasal"
            " corticosteroids for at least 8–12 weeks and perform nasal endoscopy to assess for polyps. If"
            " symptoms persist despite maximal medical therapy, offer functional endoscopic sinus surgery"
            " using this CT as the roadmap; consider biologic therapy for severe type 2 disease with polyps."
        ),
        age=(25, 65),
        female_share=0.45,
        histories=(
            "Asthma and recurrent sinus infections",
            "Several courses of antibiotics for sinus symptoms last year",
            "Allergic rhinitis with house-dust-mite sensitisation",
        ),
        complaints=(
            "Nasal obstruction and thick discharge for more than three months",
            "Loss of smell and facial fullness",
            "Post-nasal drip and chronic cough",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="CT",
        disease="Laryngeal squamous cell carcinoma",
        part="left true vocal cord",
        symptom="enhancing soft-tissue mass",
        organ="glottic airway",
        organ_dim="transverse diameter",
        organ_quantity=Quantity(6, 12, "mm"),
        anomaly_dim="maximal diameter",
        anomaly_quantity=Quantity(12, 28, "mm"),
        indicator="Laryngeal Cancer TNM Staging",
        indicator_values=("T2N0M0 (stage II)", "T3N0M0 (stage III)", "T3N1M0 (stage III)"),
        finding=(
            "Contrast-enhanced neck CT shows an {symptom} arising from the {part}, measuring {anomaly_quant},"
            " extending towards the anterior commissure. The {organ} is narrowed to {organ_quant}. There is"
            " no transcartilaginous extension through the thyroid cartilage."
        ),
        impression="Suspected glottic carcinoma: {symptom} of the {part} measuring {anomaly_quant}.",
        treatment=(
            "Confirm with direct laryngoscopy and biopsy and complete staging with chest CT or PET-CT; the"
            " {indicator} is {indicator_value}. Discuss at a head and neck MDT: early disease is treated with"
            " radiotherapy or transoral laser surgery, T3 disease with larynx-preserving concurrent"
            " cisplatin-based chemoradiotherapy or total laryngectomy; advise smoking cessation."
        ),
        age=(50, 80),
        female_share=0.18,
        histories=(
            "Smoker of 40 pack-years",
            "Heavy alcohol use and current smoker",
            "Former smoker with gastro-oesophageal reflux",
        ),
        complaints=(
            "Progressive hoarseness for three months",
            "Hoarse voice with pain on swallowing",
            "Hoarseness and a sensation of something stuck in the throat",
        ),
    ),
)

_MRI: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Vestibular schwannoma",
        part="right internal auditory canal and cerebellopontine angle",
        symptom="avidly enhancing extra-axial mass",
        organ="right internal auditory canal",
        organ_dim="diameter",
        organ_quantity=Quantity(5.5, 9.0, "mm"),
        anomaly_dim="maximal extrameatal diameter",
        anomaly_quantity=Quantity(12, 28, "mm"),
        indicator="Koos Grade",
        indicator_values=(
            "Grade II (protrudes into the cerebellopontine angle, no brainstem contact)",
            "Grade III (fills the cerebellopontine cistern, contacts the brainstem without compression)",
        ),
        finding=(
            "Post-contrast T1-weighted MRI shows an {symptom} centred on the {part}, measuring"
            " {anomaly_quant} in maximal extrameatal diameter, T2 hyperintense with an 'ice-cream cone'"
            " configuration. The {organ} is expanded to {organ_quant}. No dural tail and no hydrocephalus."
        ),
        impression="Right vestibular schwannoma: {symptom} of the {part}, {anomaly_quant}.",
        treatment=(
            "Obtain pure-tone audiometry and speech discrimination and discuss at a skull-base MDT; the"
            " {indicator} is {indicator_value}. Small grade II tumours with serviceable hearing may be"
            " observed with MRI at 6 months then yearly or treated with stereotactic radiosurgery, while"
            " tumours reaching the brainstem favour radiosurgery or microsurgical resection."
        ),
        age=(35, 70),
        female_share=0.5,
        histories=(
            "No significant past medical history",
            "Hypertension on amlodipine",
            "Tinnitus investigated two years ago without imaging",
        ),
        complaints=(
            "Gradual hearing loss in the right ear",
            "Right-sided tinnitus and unsteadiness",
            "Difficulty using the telephone on the right side",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Glioblastoma",
        part="left temporal lobe",
        symptom="heterogeneously enhancing mass with central necrosis",
        organ="peritumoral white matter",
        organ_dim="vasogenic oedema width",
        organ_quantity=Quantity(8, 30, "mm"),
        anomaly_dim="maximal diameter",
        anomaly_quantity=Quantity(30, 60, "mm"),
        indicator="Karnofsky Performance Status (KPS) Score",
        indicator_values=(
            "90 (minor signs or symptoms)",
            "80 (normal activity with effort)",
            "70 (cares for self, unable to work)",
        ),
        finding=(
            "Contrast-enhanced MRI shows a {symptom} in the {part}, measuring {anomaly_quant}, with a thick"
            " irregular enhancing rim and elevated perfusion. FLAIR hyperintense vasogenic oedema extends"
            " {organ_quant} into the {organ} with mass effect on the left lateral ventricle."
        ),
        impression="Necrotic enhancing {part} mass of {anomaly_quant}, most consistent with glioblastoma.",
        treatment=(
            "Start dexamethasone for oedema and refer to neurosurgery for maximal safe resection with IDH and"
            " MGMT testing; with a {indicator} of {indicator_value}, give radiotherapy (60 Gy in 30"
            " fractions) with concomitant and adjuvant temozolomide. Obtain MRI within 72 hours of surgery"
            " and every 2–3 months thereafter."
        ),
        age=(45, 80),
        female_share=0.4,
        histories=(
            "Hypertension, otherwise well",
            "No relevant past medical history",
            "Type 2 diabetes on metformin",
        ),
        complaints=(
            "New-onset seizure",
            "Progressive headaches and word-finding difficulty over four weeks",
            "Personality change and morning headaches",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="MRI",
        disease="Multiple sclerosis",
        part="periventricular and juxtacortical white matter",
        symptom="ovoid T2/FLAIR hyperintense lesions",
        organ="corpus callosum",
        organ_dim="body thickness",
        organ_quantity=Quantity(4.5, 8.0, "mm"),
        anomaly_dim="largest lesion diameter",
        anomaly_quantity=Quantity(4, 15, "mm"),
        indicator="Expanded Disability Status Scale (EDSS)",
        indicator_values=(
            "1.5 (no disability, minimal signs)",
            "2.5 (minimal disability in two functional systems)",
            "3.5 (fully ambulatory, moderate disability)",
        ),
        finding=(
            "Brain MRI shows multiple {symptom} in the {part}, oriented perpendicular to the lateral"
            " ventricles, the largest measuring {anomaly_quant}; one lesion shows open-ring enhancement. The"
            " {organ} measures {organ_quant} in body thickness, with callososeptal interface lesions."
        ),
        impression="Demyelinating {symptom} in the {part}, fulfilling dissemination in space.",
        treatment=(
            "Confirm with the 2017 McDonald criteria, CSF oligoclonal bands and exclusion of mimics (AQP4 and"
            " MOG antibodies); with an {indicator} of {indicator_value}, start disease-modifying therapy"
            " early, choosing a high-efficacy agent for active disease. Treat disabling relapses with"
            " high-dose methylprednisolone and repeat contrast MRI at 6–12 months."
        ),
        age=(20, 50),
        female_share=0.72,
        histories=(
            "Episode of painful blurred vision in the left eye a year ago",
            "Numbness of both legs that resolved spontaneously last year",
            "No past medical history",
        ),
        complaints=(
            "Tingling and numbness in the right arm for two weeks",
            "Double vision and imbalance",
            "Fatigue and electric-shock sensation on neck flexion",
        ),
    ),
)

_ULTRASOUND: tuple[Scenario, ...] = (
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Thyroid nodule",
        part="lower pole of the right thyroid lobe",
        symptom="solid hypoechoic nodule",
        organ="right thyroid lobe",
        organ_dim="volume",
        organ_quantity=Quantity(5, 12, "mL"),
        anomaly_dim="maximal diameter",
        anomaly_quantity=Quantity(10, 30, "mm"),
        indicator="ACR TI-RADS Score",
        indicator_values=("TR4 (moderately suspicious)", "TR5 (highly suspicious)"),
        finding=(
            "Thyroid ultrasound shows a {symptom} in the {part}, measuring {anomaly_quant} in maximal"
            " diameter, with internal vascularity. The {organ} measures {organ_quant} in volume. No"
            " suspicious cervical lymph nodes."
        ),
        impression=(
            "Indeterminate {symptom} in the {part} measuring {anomaly_quant}, for TI-RADS based management."
        ),
        treatment=(
            "Check TSH; the {indicator} is {indicator_value}. Per ACR TI-RADS, perform ultrasound-guided"
            " fine-needle aspiration for TR4 nodules of 15 mm or more and TR5 nodules of 10 mm or more"
            " (report with the Bethesda system), otherwise follow with ultrasound at 1, 2, 3 and 5 years."
        ),
        age=(25, 70),
        female_share=0.78,
        histories=(
            "Mother treated for thyroid disease",
            "Incidental nodule on carotid ultrasound",
            "No history of head and neck irradiation",
        ),
        complaints=(
            "Painless lump in the lower neck",
            "Sensation of fullness when swallowing",
            "No symptoms; nodule felt on routine examination",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Parotid pleomorphic adenoma",
        part="superficial lobe of the right parotid gland",
        symptom="well-circumscribed lobulated hypoechoic mass",
        organ="right parotid gland",
        organ_dim="craniocaudal length",
        organ_quantity=Quantity(40, 60, "mm"),
        anomaly_dim="maximal diameter",
        anomaly_quantity=Quantity(12, 35, "mm"),
        indicator="Milan System for Reporting Salivary Gland Cytopathology",
        indicator_values=(
            "Category IVA (benign neoplasm)",
            "Category IVB (salivary gland neoplasm of uncertain malignant potential)",
            "Category I (non-diagnostic)",
        ),
        finding=(
            "Ultrasound shows a {symptom} in the {part}, measuring {anomaly_quant}, with posterior acoustic"
            " enhancement and sparse peripheral vascularity. The {organ} measures {organ_quant} in"
            " craniocaudal length. No cervical lymphadenopathy."
        ),
        impression=(
            "Benign-appearing {symptom} of {anomaly_quant} in the {part}, most likely a pleomorphic adenoma."
        ),
        treatment=(
            "Perform ultrasound-guided fine-needle aspiration or core biopsy; the {indicator} result is"
            " {indicator_value}, and a non-diagnostic result is repeated. Obtain MRI if deep-lobe extension"
            " is suspected, and treat with superficial or partial parotidectomy with facial nerve"
            " preservation (not enucleation), with long-term follow-up for recurrence."
        ),
        age=(30, 65),
        female_share=0.6,
        histories=(
            "No significant past medical history",
            "Hypothyroidism on levothyroxine",
            "Lump first noticed two years ago",
        ),
        complaints=(
            "Slowly enlarging painless lump in front of the right ear",
            "Firm swelling at the angle of the jaw",
            "Painless cheek swelling with normal facial movement",
        ),
    ),
    Scenario(
        anatomy=_A,
        modality="Ultrasound",
        disease="Carotid artery stenosis",
        part="origin of the left internal carotid artery",
        symptom="heterogeneous calcified atherosclerotic plaque",
        organ="left common carotid artery",
        organ_dim="intima-media thickness",
        organ_quantity=Quantity(0.8, 1.4, "mm"),
        anomaly_dim="maximal plaque thickness",
        anomaly_quantity=Quantity(2.5, 5.5, "mm"),
        indicator="NASCET Criteria for Arterial Stenosis",
        indicator_values=("50–69% stenosis", "70–99% stenosis"),
        finding=(
            "Carotid duplex ultrasound shows a {symptom} at the {part}, maximal thickness {anomaly_quant},"
            " with luminal narrowing, post-stenotic turbulence and elevated peak systolic velocity. The"
            " {organ} intima-media thickness is {organ_quant}. Antegrade flow in both vertebral arteries."
        ),
        impression="Haemodynamically significant stenosis of the {part} due to {symptom}.",
        treatment=(
            "Start antiplatelet therapy and a high-intensity statin and control blood pressure and diabetes;"
            " the degree of stenosis by {indicator} is {indicator_value}. Confirm with CT or MR angiography"
            " and refer to vascular surgery: carotid endarterectomy within 2 weeks if symptomatic with 50–99%"
            " stenosis, or in selected asymptomatic patients with 70–99%; repeat duplex in 6–12 months."
        ),
        age=(55, 85),
        female_share=0.35,
        histories=(
            "Hypertension, hyperlipidaemia and 30 pack-year smoking history",
            "Type 2 diabetes and coronary artery disease",
            "Peripheral arterial disease with previous femoral bypass",
        ),
        complaints=(
            "Transient weakness of the right hand lasting 20 minutes",
            "Brief episode of loss of vision in the left eye",
            "Carotid bruit heard at a routine check-up",
        ),
    ),
)

SCENARIOS: tuple[Scenario, ...] = _XRAY + _CT + _MRI + _ULTRASOUND
