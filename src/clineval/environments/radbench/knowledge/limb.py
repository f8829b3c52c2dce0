"""Limb scenarios: three per modality (X-ray, CT, MRI, Ultrasound)."""

from __future__ import annotations

from clineval.environments.radbench.knowledge import Quantity, Scenario

SCENARIOS: tuple[Scenario, ...] = (
    # --- X-ray ---
    Scenario(
        anatomy="Limb",
        modality="X-ray",
        disease="Distal radius fracture",
        part="distal radial metaphysis",
        symptom="dorsally angulated extra-articular fracture",
        organ="distal radius",
        organ_dim="radial inclination",
        organ_quantity=Quantity(10, 20, "degrees", 0),
        anomaly_dim="dorsal tilt",
        anomaly_quantity=Quantity(10, 35, "degrees", 0),
        indicator="AO/OTA Fracture Classification",
        indicator_values=("2R3A2", "2R3A3"),
        finding=(
            "There is a {symptom} of the {part}, about 2 cm proximal to the radiocarpal joint, with dorsal "
            "tilt of the distal articular surface measuring {anomaly_quant}. Radial inclination of the "
            "{organ} is reduced to {organ_quant}, with mild radial shortening. No intra-articular extension "
            "is seen."
        ),
        impression="Displaced Colles-type fracture of the {part} with dorsal tilt of {anomaly_quant}.",
        treatment=(
            "Closed reduction under haematoma block and immobilisation in a sugar-tong splint. Because "
            "dorsal tilt over 10 degrees is unacceptable, an unstable fracture ({indicator} "
            "{indicator_value}) that cannot be held reduced is treated with open reduction and volar locking "
            "plate fixation; cast treatment remains reasonable in low-demand patients over 65."
        ),
        age=(50, 88),
        female_share=0.75,
        histories=(
            "Known osteopenia, not on treatment",
            "Previous vertebral fragility fracture",
            "Type 2 diabetes",
        ),
        complaints=(
            "Wrist pain and swelling after a fall on an outstretched hand",
            "Dinner-fork deformity of the wrist",
            "Unable to grip after slipping on ice",
        ),
    ),
    Scenario(
        anatomy="Limb",
        modality="X-ray",
        disease="Knee osteoarthritis",
        part="medial tibiofemoral compartment",
        symptom="joint space narrowing",
        organ="knee joint",
        organ_dim="varus angle",
        organ_quantity=Quantity(2, 10, "degrees", 0),
        anomaly_dim="minimum joint space width",
        anomaly_quantity=Quantity(0.5, 2.5, "mm"),
        indicator="Kellgren-Lawrence Grading Scale for Knee Osteoarthritis",
        indicator_values=("Grade 3", "Grade 4"),
        finding=(
            "Weight-bearing views show {symptom} of the {part}, with a minimum joint space width of "
            "{anomaly_quant}, subchondral sclerosis and marginal osteophytes. Alignment of the {organ} shows "
            "{organ_quant} of varus. The lateral compartment is relatively preserved."
        ),
        impression="Osteoarthritis of the {part} with varus alignment.",
        treatment=(
            "Education, weight loss and structured exercise therapy with topical or oral NSAIDs are core "
            "treatment, and intra-articular corticosteroid injection may be used for flares. With "
            "{indicator} {indicator_value} disease and pain refractory to conservative care, refer for "
            "unicompartmental or total knee arthroplasty."
        ),
        age=(55, 85),
        female_share=0.62,
        histories=("Obesity (BMI 33)", "Previous medial meniscectomy", "Hypertension"),
        complaints=(
            "Knee pain on walking and climbing stairs",
            "Morning stiffness of the knee lasting under 30 minutes",
            "Progressive bow-legged deformity",
        ),
    ),
    Scenario(
        anatomy="Limb",
        modality="X-ray",
        disease="Osteosarcoma",
        part="distal femoral metaphysis",
        symptom="mixed lytic-sclerotic lesion",
        organ="femoral diaphysis",
        organ_dim="cortical thickness",
        organ_quantity=Quantity(4, 7, "mm"),
        anomaly_dim="craniocaudal length",
        anomaly_quantity=Quantity(5, 14, "cm"),
        indicator="Enneking Staging System for Bone Sarcomas",
        indicator_values=("Stage IIA", "Stage IIB"),
        finding=(
            "A poorly marginated {symptom} with a wide zone of transition arises in the {part}, measuring "
            "{anomaly_quant} in craniocaudal length, with cloud-like osteoid matrix, cortical destruction, "
            "sunburst periosteal reaction and a Codman triangle. The uninvolved {organ} proximal to the "
            "lesion has a cortical thickness of {organ_quant}."
        ),
        impression=(
            "Aggressive bone-forming lesion of the {part}, highly suspicious for conventional osteosarcoma."
        ),
        treatment=(
            "Refer to a sarcoma centre before biopsy for staging (MRI of the whole femur, chest CT, bone "
            "scintigraphy or PET-CT) and core biopsy along the planned resection tract. For {indicator} "
            "{indicator_value} disease, give neoadjuvant MAP chemotherapy (methotrexate, doxorubicin, "
            "cisplatin), then limb-salvage wide resection and adjuvant chemotherapy."
        ),
        age=(10, 25),
        female_share=0.42,
        histories=("Recent growth spurt", "Retinoblastoma treated in infancy", "No significant history"),
        complaints=(
            "Knee pain waking the patient at night for two months",
            "Firm swelling above the knee",
            "Limp after a minor sports injury",
        ),
    ),
    # --- CT ---
    Scenario(
        anatomy="Limb",
        modality="CT",
        disease="Tibial plateau fracture",
        part="lateral tibial plateau",
        symptom="depressed intra-articular fracture",
        organ="proximal tibia",
        organ_dim="posterior tibial slope",
        organ_quantity=Quantity(5, 12, "degrees", 0),
        anomaly_dim="articular depression",
        anomaly_quantity=Quantity(3, 15, "mm"),
        indicator="Schatzker classification",
        indicator_values=("Type II", "Type III"),
        finding=(
            "There is a {symptom} of the {part}, with articular surface depression of {anomaly_quant} and "
            "impaction of the metaphyseal cancellous bone. The medial plateau and tibial spines are intact "
            "and there is a lipohaemarthrosis. The posterior slope of the {organ} measures {organ_quant}."
        ),
        impression="Depressed fracture of the {part} with {anomaly_quant} of articular depression.",
        treatment=(
            "Articular depression over 2 mm warrants open reduction, elevation of the depressed fragment "
            "with bone graft or substitute, and raft-screw or buttress plate fixation suited to {indicator} "
            "{indicator_value}. Obtain MRI for meniscal and ligament injury, monitor for compartment "
            "syndrome, and keep non-weight-bearing for 8 to 12 weeks with early range of motion."
        ),
        age=(30, 80),
        female_share=0.45,
        histories=("Pedestrian struck by a car bumper", "Osteoporosis on alendronate", "Fall from a horse"),
        complaints=(
            "Knee pain and swelling after a fall",
            "Unable to bear weight on the leg",
            "Tense, painful knee after a collision",
        ),
    ),
    Scenario(
        anatomy="Limb",
        modality="CT",
        disease="Calcaneal fracture",
        part="posterior subtalar facet",
        symptom="displaced intra-articular fracture",
        organ="calcaneus",
        organ_dim="Böhler angle",
        organ_quantity=Quantity(0, 18, "degrees", 0),
        anomaly_dim="articular step-off",
        anomaly_quantity=Quantity(2, 8, "mm"),
        indicator="Sanders classification",
        indicator_values=("Type II", "Type III"),
        finding=(
            "There is a {symptom} of the {part}, with an articular step-off of {anomaly_quant} on coronal "
            "reconstructions and a primary fracture line through the sinus tarsi. The {organ} is shortened "
            "and widened, with a Böhler angle reduced to {organ_quant}. The calcaneocuboid joint is spared."
        ),
        impression="Displaced intra-articular calcaneal fracture involving the {part}.",
        treatment=(
            "Elevate, splint and delay surgery until soft-tissue swelling settles (positive wrinkle test, "
            "usually 7 to 14 days). Displaced {indicator} {indicator_value} fractures in suitable patients "
            "are treated with open reduction and internal fixation through a sinus tarsi approach; smokers "
            "and patients with diabetic neuropathy or vascular disease are usually managed non-operatively."
        ),
        age=(25, 60),
        female_share=0.2,
        histories=("Fall from a ladder at work", "Current smoker", "No significant past medical history"),
        complaints=(
            "Severe heel pain after landing on the feet from a height",
            "Unable to bear weight with a swollen, bruised hindfoot",
            "Widened heel and plantar ecchymosis",
        ),
    ),
    Scenario(
        anatomy="Limb",
        modality="CT",
        disease="Osteoid osteoma",
        part="medial cortex of the proximal femoral diaphysis",
        symptom="radiolucent nidus",
        organ="femoral cortex",
        organ_dim="cortical thickness",
        organ_quantity=Quantity(8, 16, "mm"),
        anomaly_dim="diameter",
        anomaly_quantity=Quantity(4, 15, "mm"),
        indicator="Enneking Staging System for Benign Bone Tumors",
        indicator_values=("Stage 1 (latent)", "Stage 2 (active)"),
        finding=(
            "A well-defined round {symptom} measuring {anomaly_quant} lies within the {part}, with a central "
            "mineralised focus. It is surrounded by dense reactive sclerosis, with fusiform thickening of "
            "the {organ} to {organ_quant}. There is no soft-tissue mass or aggressive periosteal reaction."
        ),
        impression=(
            "Intracortical {symptom} with reactive sclerosis in the {part}, characteristic of osteoid "
            "osteoma."
        ),
        treatment=(
            "NSAIDs relieve pain and some lesions regress over years. For a painful lesion ({indicator}: "
            "{indicator_value}), CT-guided percutaneous radiofrequency ablation of the nidus is the "
            "first-line definitive treatment, with surgical excision reserved for lesions next to nerves or "
            "skin, or after failed ablation."
        ),
        age=(8, 30),
        female_share=0.33,
        histories=("No prior trauma", "Pain relieved by ibuprofen", "Previous radiograph reported as normal"),
        complaints=(
            "Dull thigh pain that is worse at night",
            "Night pain relieved within an hour by aspirin",
            "Intermittent limp for several months",
        ),
    ),
    # --- MRI ---
    Scenario(
        anatomy="Limb",
        modality="MRI",
        disease="Anterior cruciate ligament tear",
        part="anterior cruciate ligament",
        symptom="complete midsubstance tear",
        organ="tibia",
        organ_dim="anterior translation",
        organ_quantity=Quantity(5, 11, "mm"),
        anomaly_dim="fibre gap",
        anomaly_quantity=Quantity(4, 12, "mm"),
        indicator="Lachman test",
        indicator_values=("Grade 2 (6-10 mm)", "Grade 3 (>10 mm)"),
        finding=(
            "There is a {symptom} of the {part}, with no continuous fibres and a fibre gap of "
            "{anomaly_quant}. Anterior translation of the {organ} relative to the lateral femoral condyle "
            "measures {organ_quant}, with pivot-shift bone marrow contusions of the lateral femoral condyle "
            "and posterolateral tibial plateau. The menisci and collateral ligaments are intact."
        ),
        impression="Complete tear of the {part} with secondary signs of anterior instability.",
        treatment=(
            "The {indicator} is {indicator_value}. For active patients wishing to return to pivoting sports, "
            "or with recurrent instability, arthroscopic ACL reconstruction with autograft is recommended "
            "once full extension and quadriceps control are restored. Less active patients may choose "
            "structured neuromuscular rehabilitation, with delayed reconstruction if instability persists."
        ),
        age=(16, 40),
        female_share=0.4,
        histories=("Amateur footballer", "Previous contralateral ACL reconstruction", "Competitive skier"),
        complaints=(
            "Knee gave way with a pop while pivoting",
            "Rapid knee swelling within hours of injury",
            "Knee feels unstable when changing direction",
        ),
    ),
    Scenario(
        anatomy="Limb",
        modality="MRI",
        disease="Rotator cuff tear",
        part="supraspinatus tendon",
        symptom="full-thickness tear",
        organ="supraspinatus muscle",
        organ_dim="cross-sectional area",
        organ_quantity=Quantity(2.0, 4.0, "cm²"),
        anomaly_dim="anteroposterior width",
        anomaly_quantity=Quantity(10, 30, "mm"),
        indicator="Goutallier classification",
        indicator_values=("Grade 1", "Grade 2"),
        finding=(
            "There is a {symptom} of the {part} at its greater tuberosity footprint, measuring "
            "{anomaly_quant} in anteroposterior width, with the tendon stump retracted to the humeral head "
            "apex and fluid in the subacromial-subdeltoid bursa. The {organ} has a cross-sectional area of "
            "{organ_quant} on the oblique sagittal Y-view, with fatty streaks less than muscle."
        ),
        impression="Medium-sized {symptom} of the {part} without advanced fatty infiltration.",
        treatment=(
            "In an active patient with a symptomatic full-thickness tear and {indicator} {indicator_value} "
            "fatty infiltration, the muscle is still repairable, so arthroscopic rotator cuff repair is "
            "recommended, followed by sling immobilisation and staged physiotherapy. Low-demand patients may "
            "first try physiotherapy and a subacromial corticosteroid injection."
        ),
        age=(50, 78),
        female_share=0.45,
        histories=("Fall onto the outstretched arm", "Type 2 diabetes", "Long-standing overhead manual work"),
        complaints=(
            "Night pain lying on the affected shoulder",
            "Weakness lifting the arm above shoulder height",
            "Painful arc on abduction",
        ),
    ),
    Scenario(
        anatomy="Limb",
        modality="MRI",
        disease="Tibial stress reaction",
        part="posteromedial cortex of the mid and distal tibial diaphysis",
        symptom="periosteal and bone marrow oedema",
        organ="tibial cortex",
        organ_dim="cortical thickness",
        organ_quantity=Quantity(4, 8, "mm"),
        anomaly_dim="craniocaudal extent",
        anomaly_quantity=Quantity(3, 10, "cm"),
        indicator="Fredericson Classification for Tibial Stress Injuries",
        indicator_values=("Grade 2", "Grade 3"),
        finding=(
            "There is {symptom} along the {part}, extending over {anomaly_quant} craniocaudally on "
            "fat-suppressed T2-weighted images. No discrete fracture line or intracortical signal is seen, "
            "and the adjacent {organ} measures {organ_quant} in thickness. The soft tissues are otherwise "
            "normal."
        ),
        impression="Tibial bone stress reaction of the {part}, without a fracture line.",
        treatment=(
            "Stop running and use pain-free cross-training, then follow a graded return to running over "
            "about 6 to 9 weeks, as appropriate for {indicator} {indicator_value}. Correct training errors "
            "and footwear, and screen for low energy availability and vitamin D deficiency."
        ),
        age=(16, 35),
        female_share=0.6,
        histories=(
            "Recent sharp increase in running mileage",
            "Military recruit in basic training",
            "Low energy availability with restrictive eating",
        ),
        complaints=(
            "Shin pain that starts earlier in each run",
            "Focal tenderness over the inner shin",
            "Shin pain now present when walking",
        ),
    ),
    # --- Ultrasound ---
    Scenario(
        anatomy="Limb",
        modality="Ultrasound",
        disease="Deep vein thrombosis",
        part="left femoral and popliteal veins",
        symptom="occlusive intraluminal thrombus",
        organ="left common femoral vein",
        organ_dim="diameter",
        organ_quantity=Quantity(9, 14, "mm"),
        anomaly_dim="length",
        anomaly_quantity=Quantity(5, 25, "cm"),
        indicator="Wells' Criteria for DVT",
        indicator_values=("2 points (DVT likely)", "3 points (DVT likely)", "4 points (DVT likely)"),
        finding=(
            "The {part} are distended and non-compressible, containing {symptom} over a length of "
            "{anomaly_quant}, with absent colour flow and no augmentation. The thrombus ends just below the "
            "saphenofemoral junction; the {organ} is patent and compressible, measuring {organ_quant}."
        ),
        impression="Acute occlusive deep vein thrombosis of the {part}.",
        treatment=(
            "The pre-test {indicator} score was {indicator_value}, and proximal DVT is now confirmed. Start "
            "a direct oral anticoagulant (apixaban or rivaroxaban) or low-molecular-weight heparin for at "
            "least 3 months, extended if unprovoked with low bleeding risk; thrombolysis is reserved for "
            "limb-threatening phlegmasia."
        ),
        age=(40, 85),
        female_share=0.5,
        histories=(
            "Knee arthroplasty three weeks ago",
            "Active colorectal cancer",
            "Recent long-haul flight",
        ),
        complaints=(
            "Swollen, painful left calf for three days",
            "Left leg swelling with pitting oedema",
            "Left leg feels heavy and warm",
        ),
    ),
    Scenario(
        anatomy="Limb",
        modality="Ultrasound",
        disease="Achilles tendon rupture",
        part="mid-portion of the Achilles tendon",
        symptom="full-thickness rupture",
        organ="Achilles tendon",
        organ_dim="thickness",
        organ_quantity=Quantity(7, 11, "mm"),
        anomaly_dim="gap between tendon ends",
        anomaly_quantity=Quantity(10, 50, "mm"),
        indicator="Kuwada classification",
        indicator_values=("Type II", "Type III"),
        finding=(
            "There is a {symptom} of the {part}, 4 to 6 cm above the calcaneal insertion, with a "
            "haematoma-filled gap of {anomaly_quant} between the retracted ends in neutral ankle position. "
            "The gap does not fully close on passive plantar flexion. The proximal stump of the {organ} is "
            "thickened to {organ_quant}."
        ),
        impression="Complete rupture of the {part} with a tendon-end gap of {anomaly_quant}.",
        treatment=(
            "Because the tendon ends do not appose ({indicator} {indicator_value}), operative repair is "
            "favoured over functional bracing: end-to-end repair, with augmentation such as V-Y advancement "
            "or flexor hallucis longus transfer when the ends cannot be brought together. Follow with early "
            "protected weight-bearing in an equinus boot."
        ),
        age=(30, 55),
        female_share=0.2,
        histories=(
            "Recent fluoroquinolone course",
            "Weekend squash player",
            "Previous Achilles tendinopathy",
        ),
        complaints=(
            "Felt a kick to the back of the heel while pushing off",
            "Unable to stand on tiptoe",
            "Weak push-off when walking",
        ),
    ),
    Scenario(
        anatomy="Limb",
        modality="Ultrasound",
        disease="Carpal tunnel syndrome",
        part="median nerve at the carpal tunnel inlet",
        symptom="hypoechoic nerve swelling",
        organ="flexor retinaculum",
        organ_dim="palmar bowing",
        organ_quantity=Quantity(2.5, 4.5, "mm"),
        anomaly_dim="cross-sectional area",
        anomaly_quantity=Quantity(11, 20, "mm²"),
        indicator="Bland neurophysiological grading scale",
        indicator_values=("Grade 2 (mild)", "Grade 3 (moderate)", "Grade 4 (severe)"),
        finding=(
            "The {part} shows {symptom} with loss of the fascicular pattern and a cross-sectional area of "
            "{anomaly_quant} at the pisiform level. The nerve is flattened distally beneath the {organ}, "
            "which shows palmar bowing of {organ_quant}. No ganglion, tenosynovitis or other mass is seen."
        ),
        impression=(
            "Enlarged median nerve at the carpal tunnel inlet, consistent with carpal tunnel syndrome."
        ),
        treatment=(
            "Nerve conduction studies show {indicator} {indicator_value}. Mild to moderate disease is "
            "treated first with a neutral wrist night splint and a carpal tunnel corticosteroid injection; "
            "surgical carpal tunnel release is recommended for severe disease, thenar weakness or atrophy, "
            "or symptoms persisting despite conservative care."
        ),
        age=(40, 70),
        female_share=0.7,
        histories=("Type 2 diabetes", "Hypothyroidism", "Repetitive keyboard work"),
        complaints=(
            "Tingling in the thumb, index and middle fingers at night",
            "Dropping objects from the hand",
            "Hand pain waking the patient, relieved by shaking the hand",
        ),
    ),
)
